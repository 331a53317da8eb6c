"""What a replay reads instead of the world: memory recalls, skills, background results, time.

Each answers as the record says the run was answered at the same point: a recall
gives the entries recorded for it, the skills are the list recorded last, a
background task's result is the next recorded delivery, and each event gets the
time recorded for its seq. Nothing is stored, looked up or run.
"""

from __future__ import annotations

import bisect
from collections import defaultdict, deque
from typing import TYPE_CHECKING

from roost.engine.background import Finished
from roost.engine.digests import is_legacy_digest
from roost.errors import RoostError
from roost.events import (
    BackgroundEvent,
    Event,
    LlmCallEvent,
    MemoryEntry,
    MemoryEvent,
    MessageEvent,
    SkillInfo,
    SkillsEvent,
    TimelineEntry,
    now_iso,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from roost.engine.recorded.stops import Stops
    from roost.engine.sources import RunPosition
    from roost.flow.models import Flow


def _next_seq(run: RunPosition | None) -> int:
    return run.state.next_seq if run is not None else 0


class RecordedMemory:
    """The ``MemoryBank`` of a replay: recalls give what the run recorded, in order.

    Nothing is stored or forgotten: what the run's tools changed is in its record,
    and the store's memory may have moved on since.
    """

    def __init__(self, recorded: Sequence[Event]) -> None:
        self._recalls: dict[str, deque[MemoryEvent]] = defaultdict(deque)
        for event in recorded:
            if isinstance(event, MemoryEvent) and event.operation == "recall":
                self._recalls[event.scope].append(event)

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None:
        """Keeps nothing: a replay changes no memory."""

    def forget(self, scope: str, key: str, run: str) -> bool:
        """Forgets nothing: a replay changes no memory."""
        return True

    def entries(self, scope: str, as_of: str | None = None) -> list[MemoryEntry]:
        """None: a replay reads memory only through the recalls it recorded."""
        return []

    def keep_timeline(self, scope: str, entry: TimelineEntry) -> None:
        """Keeps nothing: a replay changes no memory."""

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
        """None: a replay's tools answer from the record, never from here."""
        return []

    def recall(
        self, scope: str, query: str, limit: int, as_of: str | None = None
    ) -> list[MemoryEntry]:
        """The entries the run recalled next in ``scope`` for this query; none if it did not."""
        waiting = self._recalls[scope]
        if waiting and waiting[0].query == query:
            return list(waiting.popleft().entries or ())[:limit]
        return []


class RecordedSkills:
    """The skills of a replay: those the run's ``skills`` events recorded, never the folders'.

    At each point the replay asks, the answer is the latest recorded list at or before
    the event it writes next; so a list the run recorded at a seq is recorded there again.
    """

    def __init__(self, recorded: Sequence[Event]) -> None:
        found = [event for event in recorded if isinstance(event, SkillsEvent)]
        self._seqs = [event.seq for event in found]
        self._skills = [event.skills for event in found]
        self._run: RunPosition | None = None

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def __call__(self, flow: Flow) -> tuple[SkillInfo, ...]:
        """The list recorded last by now; none when the run had recorded none."""
        index = bisect.bisect_right(self._seqs, _next_seq(self._run)) - 1
        return self._skills[index] if index >= 0 else ()


class RecordedBackground:
    """The results of background tasks, delivered in the order the record delivered them.

    Nothing runs: each wait gives the next recorded delivery (its text as it was),
    or stops the replay where the recorded process stopped before one came.
    """

    def __init__(self, recorded: Sequence[Event], stops: Stops) -> None:
        self._stop_here = stops.stop_here
        self._deliveries = [
            e for e in recorded if isinstance(e, MessageEvent) and e.background is not None
        ]
        self._next = 0

    def revive(self, open_tasks: Iterable[BackgroundEvent]) -> None:
        """Nothing to revive: no child runs in a replay."""

    async def next_finished(self, open_tasks: Sequence[BackgroundEvent]) -> Finished:
        self._stop_here()
        if self._next >= len(self._deliveries):
            raise RoostError("replay: the record delivers no more background results")
        delivery = self._deliveries[self._next]
        self._next += 1
        note = delivery.background
        assert note is not None
        task = next((t for t in open_tasks if t.task == note.task), None)
        if task is None:
            raise RoostError(f"replay: background task {note.task} is not open here")
        content = delivery.content.split("\n\n", 1)[-1]
        return Finished(task, content, note.status == "failed")


class RecordedClock:
    """A clock that gives the event about to be made the time recorded for its seq.

    Past the recorded events (a replay that went further), it gives the current time.
    """

    def __init__(self, recorded: Sequence[Event]) -> None:
        self._times = {event.seq: event.ts for event in recorded}
        self._run: RunPosition | None = None

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def __call__(self) -> str:
        return self._times.get(_next_seq(self._run)) or now_iso()


class LegacyDigests:
    """Whether the call being made now was recorded before digests covered the whole
    request (it is digested the old way, as it was then)."""

    def __init__(self, old_form: set[int]) -> None:
        self._old_form = old_form  # the seqs of the calls recorded with the old digest
        self._run: RunPosition | None = None

    @classmethod
    def of(cls, recorded: Sequence[Event]) -> LegacyDigests | None:
        """The record's old-form calls; None when it has none (the usual case)."""
        old_form = {
            e.seq
            for e in recorded
            if isinstance(e, LlmCallEvent) and is_legacy_digest(e.request_digest)
        }
        return cls(old_form) if old_form else None

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def __call__(self) -> bool:
        return _next_seq(self._run) in self._old_form
