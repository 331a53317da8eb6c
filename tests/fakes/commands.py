"""``roost`` run in-process for a test, as a user runs it: what it printed, never a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.cli_inprocess import Ran, run_cli

if TYPE_CHECKING:
    from pathlib import Path


def roost(*args: str, cwd: Path) -> Ran:
    result = run_cli(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result
