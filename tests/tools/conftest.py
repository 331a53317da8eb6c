"""Helpers for the tools tests: flows built in memory but placed in a real folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from roost.flow.models import PythonTool
from roost.testing import unchecked_flow
from roost.tools.python_tool import python_tool

if TYPE_CHECKING:
    from roost.flow.models import Flow
    from roost.tools import Tool

DATA = Path(__file__).parent / "data"


def make_flow(data: dict[str, Any], folder: Path = DATA, name: str = "flow.yaml") -> Flow:
    """A Flow from a dict, as if loaded from ``folder/name`` (relative tool paths start there)."""
    return unchecked_flow({"roost": 1, "name": "test", **data}, path=folder / name)


def tool(target: str, folder: Path = DATA, **config: object) -> Tool:
    """The Python tool ``target`` (``module:function``) of ``folder``, named as the flow would."""
    return python_tool(
        target, target.replace(":", "_"), PythonTool(python=target, **config), folder
    )


@pytest.fixture
def data_dir() -> Path:
    return DATA
