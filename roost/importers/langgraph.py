"""LangGraph: a SqliteSaver database (not read yet)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.importers.model import Conversation, ImportFormatError

if TYPE_CHECKING:
    from pathlib import Path


def read(path: Path, thread: str | None) -> Conversation:
    """Refuses for now: reading LangGraph's checkpoints is not built yet."""
    raise ImportFormatError(f"{path.name}: --from langgraph is not built yet")
