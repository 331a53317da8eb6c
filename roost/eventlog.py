"""Where a run's events go: the small interface every log backend satisfies.

The engine appends the events of one step together (no model, tool or person
is awaited between them) and each backend makes that batch durable as a unit:
the JSON Lines file flushes it, the SQL store commits it in one transaction.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from roost.errors import ConcurrentRunError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.events import Event, MemoryEntry


@runtime_checkable
class EventLog(Protocol):
    """An append-only list of one run's events."""

    @property
    def run_id(self) -> str: ...

    def load(self) -> list[Event]:
        """Every event of the run, in seq order."""
        ...

    def append(self, events: Sequence[Event]) -> None:
        """Adds one step's events; raises ConcurrentRunError when a seq is already taken."""
        ...


class MemoryLog:
    """A log kept in a list: for tests, embedding and benchmarks."""

    def __init__(self, run_id: str, events: Sequence[Event] = ()) -> None:
        self._run_id = run_id
        self._events: list[Event] = list(events)

    @property
    def run_id(self) -> str:
        return self._run_id

    def load(self) -> list[Event]:
        return list(self._events)

    def append(self, events: Sequence[Event]) -> None:
        expected = len(self._events)
        for offset, event in enumerate(events):
            if event.seq != expected + offset:
                next_seq = expected + offset
                raise ConcurrentRunError(
                    f"run {self._run_id}: event seq {event.seq} is not the next ({next_seq})"
                )
        self._events.extend(events)


def new_run_id() -> str:
    """A short, time-sortable run id such as ``20261130-144110-3f9a2c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


@runtime_checkable
class MemoryBank(Protocol):
    """Memory that lasts across runs: knowledge entries by scope and key, found by words.

    ``recall`` searches the words of ``query`` (any text: quotes, operators and
    the like are words too, never syntax) and gives the best ``limit`` entries.
    """

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None: ...

    def forget(self, scope: str, key: str) -> bool: ...

    def recall(self, scope: str, query: str, limit: int) -> list[MemoryEntry]: ...
