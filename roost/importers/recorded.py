"""The stand-in for a tool another engine ran: roost has its result, not its code."""

from __future__ import annotations

from typing import Any


def not_recorded(**arguments: Any) -> str:
    """Refuses to run: the imported run holds this tool's results only."""
    raise RuntimeError(
        "this tool was recorded by another engine: fork with --flow FILE naming a real tool"
    )
