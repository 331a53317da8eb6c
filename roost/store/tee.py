"""A log that writes every batch to a primary log and to copies (``--events PATH``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.store.interrupts import writing_a_batch

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.events import Event
    from roost.ports import EventLog


class TeeLog:
    """Reads from ``primary``; appends to it first, then to each copy.

    The primary decides: a batch it refuses (a concurrent run) reaches no copy.
    """

    def __init__(self, primary: EventLog, copies: Sequence[EventLog]) -> None:
        self.primary = primary
        self.copies = list(copies)

    @property
    def run_id(self) -> str:
        return self.primary.run_id

    @property
    def warnings(self) -> list[str]:
        """What loading the primary skipped (a JSON Lines file's torn last line)."""
        found: list[str] = getattr(self.primary, "warnings", [])
        return found

    def load(self) -> list[Event]:
        return self.primary.load()

    def append(self, events: Sequence[Event]) -> None:
        with writing_a_batch():
            self.primary.append(events)
            for copy in self.copies:
                copy.append(events)
