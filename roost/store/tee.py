"""A log that writes every batch to a primary log and to copies (``--events PATH``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.eventlog import EventLog
    from roost.events import Event


# Ctrl-C raises KeyboardInterrupt between two bytecodes (see the CLI's run command); one
# landing between the primary's write and a copy's would leave the copy a batch short.
# While a batch is being written, an interrupt is held and raised once every log has it.
_writing = 0
_held = False


def interrupt_now_or_after_the_batch() -> None:
    """Raises KeyboardInterrupt, or holds it until the batch being written is in every log."""
    global _held
    if _writing:
        _held = True
        return
    raise KeyboardInterrupt


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
        global _writing, _held
        _writing += 1
        try:
            self.primary.append(events)
            for copy in self.copies:
                copy.append(events)
        finally:
            _writing -= 1
        if _held and not _writing:
            _held = False
            raise KeyboardInterrupt
