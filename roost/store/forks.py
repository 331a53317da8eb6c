"""Fork points and the shared start of a fork, for stored runs and JSON Lines files alike.

A stored fork reads its shared events from its parent's rows; a fork of a JSON
Lines file gets a new file of its own that starts with a copy of them. Both
refuse the same fork points with the same words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import EventLogError, UsageError
from roost.eventlog import EventLog
from roost.events import Event, RunStartEvent
from roost.store.jsonl import JsonlLog
from roost.store.tee import TeeLog

if TYPE_CHECKING:
    from roost.store.sqllog import SqlLog

# A fork file's name ends in "-fork-" and the fork's run id (see new_run_id).
_FORK_SUFFIX = re.compile(r"-fork-\d{8}-\d{6}-[0-9a-f]{6}$")


def check_fork_point(
    run_id: str, count: int, at: int, events: Callable[[], Sequence[Event]]
) -> None:
    """Refuses ``at`` unless it lies in 1..``count`` between two steps.

    ``events`` gives the run's events; it is called only when a step boundary
    has to be checked, so a stored run is not read for nothing.
    """
    if at < 1 or at > count:
        raise UsageError(f"run {run_id} has events 0 to {count - 1}: cannot fork at {at}")
    if 1 < at < count:
        _check_step_boundary(events(), at, run_id)


def fork_prefix(events: Sequence[Event], at: int, new_id: str) -> list[Event]:
    """The first ``at`` events as the start of run ``new_id``, its run_start naming the parent.

    Seq and time stamps stay as recorded: the stamps mark which events were one
    step, which a later fork of this fork needs to check its own fork point.
    """
    if not events or not isinstance(events[0], RunStartEvent):
        raise EventLogError("the run has no run_start event: cannot fork it")
    parent = events[0].run
    check_fork_point(parent, len(events), at, lambda: events)
    prefix = [event.model_copy(update={"run": new_id}) for event in events[:at]]
    prefix[0] = prefix[0].model_copy(update={"parent": parent, "fork_at": at})
    return prefix


def fork_file_path(parent: Path, new_id: str) -> Path:
    """Where the fork ``new_id`` of the run in file ``parent`` is written: beside it.

    ``chat.jsonl`` forks to ``chat-fork-<id>.jsonl``; a fork of that fork is
    named after ``chat`` again rather than growing a second suffix.
    """
    stem = _FORK_SUFFIX.sub("", parent.stem)
    return parent.with_name(f"{stem}-fork-{new_id}.jsonl")


class FileFork:
    """A fork of a run's JSON Lines file, written to a new file of its own.

    The new file starts with the shared events (re-stamped with the fork's run
    id), so it stands alone as ``roost export`` of a stored fork does. Nothing is
    written before ``materialize``: a fork refused once its shared events are
    known leaves no file. ``stored``, when given, is the same fork in the store
    (its parent stored too); it then gets every later step as well.
    """

    def __init__(self, path: Path, prefix: list[Event], stored: SqlLog | None = None) -> None:
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


def _check_step_boundary(events: Sequence[Event], at: int, run_id: str) -> None:
    """Refuses a fork point inside a step: a step's events were written together.

    The events of one step share their time stamp; cutting between them would
    make a history no process could have left (an answer without its message).
    """
    stamp = events[at].ts
    if stamp != events[at - 1].ts:
        return
    first = at
    while first > 0 and events[first - 1].ts == stamp:
        first -= 1
    last = at
    while last + 1 < len(events) and events[last + 1].ts == stamp:
        last += 1
    before = f"{max(first, 1)} or "
    raise UsageError(
        f"run {run_id}: events {first} to {last} are one step; fork at {before}{last + 1}"
    )
