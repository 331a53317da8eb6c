"""The ids of the runs stored in a folder's .roost store, as a command line test reads them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from pathlib import Path


def stored(folder: Path, batch: str | None = None) -> list[str]:
    store = SqlStore(str(folder / ".roost" / "roost.db"))
    try:
        return sorted(run.id for run in store.runs(batch=batch))
    finally:
        store.close()
