"""The command line's test fixtures: other rooms' fixtures, shared rather than copied.

``roost`` runs the command line in a fresh folder (the store commands' and
``roost memory``'s tests use it); ``pg_url`` is a fresh database on the throwaway
PostgreSQL server, for a command run against a ``postgresql://`` store; ``team``
is a folder with a flow, its tool and its test file, for ``roost test``; ``ask``
is a flow file whose run asks the person at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.engine.conftest import ASK
from tests.flowtest.conftest import team
from tests.store.conftest import pg_server, pg_url, roost

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["pg_server", "pg_url", "roost", "team"]


@pytest.fixture
def ask(tmp_path: Path) -> Path:
    path = tmp_path / "ask.yaml"
    path.write_text(ASK)
    return path
