"""The memory a fork sees: the shared memory of its fork point, with its own writes over it.

A fork goes on from a point in its parent's past, so it reads the shared memory as it
was then (``as_of`` its run_start's ``memory_at``), not as later runs have left it.
What the fork writes (``memory#store``, ``memory#forget``, timeline entries) is kept
in its own ``memory`` events and nowhere else: neither its parent nor any other run
sees it. The events the fork's log inherited count as its own writes too, so a fork
of a fork sees what the fork before it wrote after the first fork point.

The run's writes win over the shared memory: a key the run stored shows its content,
a key it forgot is gone. Entries the run stored that match a query come before the
shared ones (ranked by how many of the query's words they hold, then importance):
they are what this conversation itself said.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.ports import words

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.events import MemoryEntry, MemoryEvent, TimelineEntry
    from roost.ports import MemoryBank
    from roost.runstate import RunState


def fork_view(bank: MemoryBank | None, state: RunState) -> MemoryBank | None:
    """``bank`` as the run of ``state`` sees it: a ``ForkMemory`` for a fork, else itself.

    A replay's bank is never wrapped: its recalls are those the run recorded, which
    the fork's view had given already.
    """
    if bank is None or state.memory_at is None:
        return bank
    from roost.engine.recorded import RecordedMemory  # only a fork's memory gets here

    if isinstance(bank, RecordedMemory | ForkMemory):
        return bank
    return ForkMemory(bank, state, state.memory_at)


class ForkMemory:
    """A ``MemoryBank`` that reads ``shared`` as of ``memory_at`` and writes only events.

    ``state`` is the run's live state: its ``memory_writes`` are the overlay, kept
    current as the engine records each ``memory`` event, and refolded with the state.
    """

    def __init__(self, shared: MemoryBank, state: RunState, memory_at: str) -> None:
        self.shared = shared
        self.memory_at = memory_at
        self._state = state

    # ------------------------------------------------------------------ writes: events only

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None:
        """Keeps nothing in the shared memory: the ``memory`` event the engine records is
        the fork's store."""

    def forget(self, scope: str, key: str, run: str) -> bool:
        """Whether the fork sees an entry ``key``; its ``memory`` event forgets it, for the
        fork alone."""
        return any(entry.key == key for entry in self.entries(scope))

    def keep_timeline(self, scope: str, entry: TimelineEntry) -> None:
        """Keeps nothing in the shared memory: the fork's ``memory`` event is the entry."""

    # ------------------------------------------------------------------ reads

    def recall(
        self, scope: str, query: str, limit: int, as_of: str | None = None
    ) -> list[MemoryEntry]:
        """The run's own matching entries, then the shared ones of its time, ``limit`` at most."""
        if limit <= 0:
            return []
        own = self._own_entries(scope, as_of)
        # Asked for more, as entries the run replaced or forgot are dropped from them.
        found = self.shared.recall(scope, query, limit + len(own), as_of=self._shared_at(as_of))
        wanted = set(words(query))
        scored = [
            (_score(wanted, f"{entry.key} {entry.content}") * (0.5 + entry.importance), entry)
            for entry in own.values()
            if entry is not None
        ]
        mine = [entry for score, entry in sorted(scored, key=lambda s: -s[0]) if score > 0]
        return (mine + [entry for entry in found if entry.key not in own])[:limit]

    def entries(self, scope: str, as_of: str | None = None) -> list[MemoryEntry]:
        """Every entry the run sees in ``scope``, the most important first."""
        own = self._own_entries(scope, as_of)
        shared = self.shared.entries(scope, as_of=self._shared_at(as_of))
        seen = [entry for entry in shared if entry.key not in own]
        seen += [entry for entry in own.values() if entry is not None]
        return sorted(seen, key=lambda entry: -entry.importance)

    def timeline(
        self,
        scope: str,
        query: str,
        limit: int,
        *,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> list[TimelineEntry]:
        """The run's own matching timeline entries (newest first), then the shared ones."""
        if limit <= 0:
            return []
        wanted = set(words(query))
        mine = [
            entry
            for entry in self._own_timeline(scope, as_of)
            if (since is None or entry.at >= since)
            and (until is None or entry.at <= until)
            and (not wanted or _score(wanted, entry.summary) > 0)
        ]
        mine.reverse()
        found = self.shared.timeline(
            scope,
            query,
            limit + len(mine),
            since=since,
            until=until,
            as_of=self._shared_at(as_of),
        )
        known = {(entry.run, entry.at) for entry in mine}
        return (mine + [entry for entry in found if (entry.run, entry.at) not in known])[:limit]

    # ------------------------------------------------------------------ the overlay

    def _shared_at(self, as_of: str | None) -> str:
        return self.memory_at if as_of is None else min(as_of, self.memory_at)

    def _writes(self, scope: str, as_of: str | None) -> Iterator[MemoryEvent]:
        for event in self._state.memory_writes:
            if event.scope == scope and (as_of is None or event.ts <= as_of):
                yield event

    def _own_entries(self, scope: str, as_of: str | None) -> dict[str, MemoryEntry | None]:
        """Each key the run wrote in ``scope``: its latest entry, None when it forgot it."""
        own: dict[str, MemoryEntry | None] = {}
        for event in self._writes(scope, as_of):
            if event.entry is None:
                continue
            own[event.entry.key] = event.entry if event.operation == "store" else None
        return own

    def _own_timeline(self, scope: str, as_of: str | None) -> list[TimelineEntry]:
        return [event.timeline for event in self._writes(scope, as_of) if event.timeline]


def _score(wanted: set[str], text: str) -> int:
    """How many of the ``wanted`` words ``text`` holds."""
    return len(wanted.intersection(words(text)))
