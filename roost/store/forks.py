"""Fork points and the shared start of a fork, for stored runs and JSON Lines files alike.

A stored fork reads its shared events from its parent's rows; a fork of a JSON
Lines file gets a new file of its own that starts with a copy of them. Both
refuse the same fork points with the same words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from roost.errors import EventLogError, UsageError
from roost.events import Event, RunStartEvent
from roost.ports import EventLog
from roost.store.jsonl import JsonlLog
from roost.store.tee import TeeLog

if TYPE_CHECKING:
    from pathlib import Path

# A fork file's name ends in "-fork-" and the fork's run id (see new_run_id).
_FORK_SUFFIX = re.compile(r"-fork-\d{8}-\d{6}-[0-9a-f]{6}$")


# Why a fork at a point cannot go on (None: it can); the command that forks knows.
Refusal = Callable[[int], str | None]


def check_fork_point(
    run_id: str,
    count: int,
    at: int,
    events: Callable[[], Sequence[Event]],
    refuse: Refusal | None = None,
) -> None:
    """Refuses ``at`` unless it lies in 1..``count`` between two steps (and ``refuse`` agrees).

    ``events`` gives the run's events; it is called only when a step boundary
    has to be checked, so a stored run is not read for nothing. A refusal names
    the nearest points before and after that would be accepted, never others.
    """
    if at < 1 or at > count:
        raise UsageError(f"run {run_id} has events 0 to {count - 1}: cannot fork at {at}")
    if refuse is None and not 1 < at < count:
        return
    recorded = events()
    span = _step_span(recorded, at)
    reason = f"events {span[0]} to {span[1]} are one step" if span else None
    if reason is None and refuse is not None:
        reason = refuse(at)
    if reason is None:
        return
    below, above = _accepted_near(recorded, at, refuse)
    raise UsageError(f"run {run_id}: {reason}; {_suggestion(below, above)}")


def fork_refusal(status: str, with_message: bool) -> str | None:
    """Why a fork whose shared events leave the run in ``status`` cannot go on; None if it can.

    A fork goes on from where its shared events leave the run: a new start, an
    answer at an interrupt, or a retry of the step in progress; a run that has
    terminated has nowhere to go, and ``--message`` needs a start or an interrupt.
    """
    if status == "terminated":
        return "by then the run has terminated"
    if with_message and status not in ("new", "paused"):
        return (
            f"at this point the run is {status}: --message needs a fork point where the run "
            "waits for a person, or --at 1 for a new start message"
        )
    return None


def fork_prefix(
    events: Sequence[Event], at: int, new_id: str, refuse: Refusal | None = None
) -> list[Event]:
    """The first ``at`` events as the start of run ``new_id``, its run_start naming the parent
    and the time whose memory the fork sees (``memory_at``).

    Seq and time stamps stay as recorded: the stamps mark which events were one
    step, which a later fork of this fork needs to check its own fork point.
    """
    if not events or not isinstance(events[0], RunStartEvent):
        raise EventLogError("the run has no run_start event: cannot fork it")
    parent = events[0].run
    check_fork_point(parent, len(events), at, lambda: events, refuse)
    prefix = [event.model_copy(update={"run": new_id}) for event in events[:at]]
    seen = memory_at(events[0], events[at - 1])
    prefix[0] = prefix[0].model_copy(update={"parent": parent, "fork_at": at, "memory_at": seen})
    return prefix


def memory_at(start: RunStartEvent, last_shared: Event) -> str:
    """The time whose shared memory a fork sees: its last shared event's.

    ``start`` is the parent's run_start. A parent that is itself a fork sees the memory
    of its own fork point; a fork of it sees that earlier time's, or its own last shared
    event's when that is earlier still (it forks inside the part the parent shares).
    """
    return last_shared.ts if start.memory_at is None else min(start.memory_at, last_shared.ts)


def fork_file_path(parent: Path, new_id: str) -> Path:
    """Where the fork ``new_id`` of the run in file ``parent`` is written: beside it.

    ``chat.jsonl`` forks to ``chat-fork-<id>.jsonl``; a fork of that fork is
    named after ``chat`` again rather than growing a second suffix.
    """
    stem = _FORK_SUFFIX.sub("", parent.stem)
    return parent.with_name(f"{stem}-fork-{new_id}.jsonl")


class StoredFork(EventLog, Protocol):
    """A fork's log in the store (a ``SqlLog``), whose row can be written before its events."""

    def materialize(self) -> None:
        """Stores the fork's row now, before any event of its own."""
        ...


class FileFork:
    """A fork of a run's JSON Lines file, written to a new file of its own.

    The new file starts with the shared events (re-stamped with the fork's run
    id), so it stands alone as ``roost export`` of a stored fork does. Nothing is
    written before ``materialize``: a fork refused once its shared events are
    known leaves no file. ``stored``, when given, is the same fork in the store
    (its parent stored too); it then gets every later step as well.
    """

    def __init__(self, path: Path, prefix: list[Event], stored: StoredFork | None = None) -> None:
        self.path = path
        self.stored = stored
        self._prefix = prefix
        self._file = JsonlLog(path, prefix[0].run)
        self._log: EventLog = TeeLog(self._file, [stored]) if stored else self._file
        self._written = False

    @property
    def run_id(self) -> str:
        return self._file.run_id

    def load(self) -> list[Event]:
        return self._log.load() if self._written else list(self._prefix)

    def append(self, events: Sequence[Event]) -> None:
        self._log.append(events)

    def materialize(self) -> None:
        """Writes the new file with the shared events (and the stored fork's row)."""
        if self._written:
            return
        if self.path.exists():
            raise UsageError(f"{self.path} already exists: not overwriting it")
        self._file.append(self._prefix)
        if self.stored is not None:
            self.stored.materialize()
        self._written = True


def _step_span(events: Sequence[Event], at: int) -> tuple[int, int] | None:
    """The first and last event of the step ``at`` cuts through; None between two steps.

    The events of one step share their time stamp; cutting between them would
    make a history no process could have left (an answer without its message).
    The start (``at`` 1) and the end of the run are always between two steps.
    """
    if not 1 < at < len(events):
        return None
    stamp = events[at].ts
    if stamp != events[at - 1].ts:
        return None
    first = at
    while first > 0 and events[first - 1].ts == stamp:
        first -= 1
    last = at
    while last + 1 < len(events) and events[last + 1].ts == stamp:
        last += 1
    return first, last


def _accepted_near(
    events: Sequence[Event], at: int, refuse: Refusal | None
) -> tuple[int | None, int | None]:
    """The nearest accepted fork points before and after ``at``."""

    def accepted(point: int) -> bool:
        return _step_span(events, point) is None and (refuse is None or refuse(point) is None)

    below = next((p for p in range(at - 1, 0, -1) if accepted(p)), None)
    above = next((p for p in range(at + 1, len(events) + 1) if accepted(p)), None)
    return below, above


def _suggestion(below: int | None, above: int | None) -> str:
    points = [str(p) for p in (below, above) if p is not None]
    if not points:
        return "no point of this run can be forked that way"
    return "fork at " + " or ".join(points)
