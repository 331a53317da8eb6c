"""Helpers for the tools tests: flows built in memory but placed in a real folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from roost.testing import unchecked_flow

if TYPE_CHECKING:
    from roost.flow.models import Flow

DATA = Path(__file__).parent / "data"


def make_flow(data: dict[str, Any], folder: Path = DATA, name: str = "flow.yaml") -> Flow:
    """A Flow from a dict, as if loaded from ``folder/name`` (relative tool paths start there)."""
    return unchecked_flow({"roost": 1, "name": "test", **data}, path=folder / name)


@pytest.fixture
def data_dir() -> Path:
    return DATA
