"""Where each task follows a Runner's calls from: the bookkeeping behind ``Runner.events()``.

A task sees a Runner's events from the first call that began after the task
was made. Which call that is needs the order of a task's making and a call's
beginning. Each beginning of a call looks over the loop's tasks once, for all
Runners of the loop together, and notes when it first saw each new one (its
epoch); a Runner keeps only the epoch of each of its own calls. A server with
hundreds of runs at once then keeps one entry per task, not one per task per
run, and a call's beginning notes only the tasks it has not seen before.
"""

from __future__ import annotations

import asyncio
import bisect
import weakref
from typing import Any, NamedTuple


class Cursor(NamedTuple):
    """Where a task's events begin: this seq, in this call (calls are numbered from 0)."""

    seq: int
    call: int


class _LoopTasks:
    """When a call's beginning first saw each task of one event loop."""

    def __init__(self) -> None:
        self.epoch = 0  # beginnings so far, of any Runner's calls on this loop
        self.first_seen: weakref.WeakKeyDictionary[asyncio.Task[Any], int] = (
            weakref.WeakKeyDictionary()
        )

    def begin(self) -> int:
        """A call begins: notes the tasks not seen before; returns this beginning's epoch."""
        self.epoch += 1
        seen = self.first_seen
        for task in asyncio.all_tasks():
            if task not in seen:
                seen[task] = self.epoch
        return self.epoch

    def oldest(self) -> int:
        """The earliest epoch a living task was first seen at (the next one: none alive)."""
        return min(self.first_seen.values(), default=self.epoch + 1)


_LOOPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopTasks] = (
    weakref.WeakKeyDictionary()
)


def _loop_tasks() -> _LoopTasks:
    loop = asyncio.get_running_loop()
    tasks = _LOOPS.get(loop)
    if tasks is None:
        tasks = _LOOPS[loop] = _LoopTasks()
    return tasks


class Calls:
    """The calls to start, continue_ and retry so far, and where each task follows them from."""

    def __init__(self) -> None:
        self.begun = 0
        self.ended = 0
        self.first_seq = 0  # of the call that began last
        self._epochs: list[int] = []  # of this Runner's calls that a living task may follow
        self._starts: list[Cursor] = []  # those calls' beginnings, in the same order
        self._kept = 8  # calls kept before the ones no living task can follow are dropped
        self._cursors: weakref.WeakKeyDictionary[asyncio.Task[Any], Cursor] = (
            weakref.WeakKeyDictionary()
        )

    def begin(self, first_seq: int) -> None:
        """A call begins at ``first_seq``: each task alive now follows it, unless placed already."""
        tasks = _loop_tasks()
        self.first_seq = first_seq
        self._epochs.append(tasks.begin())
        self._starts.append(Cursor(first_seq, self.begun))
        self.begun += 1
        if len(self._epochs) > self._kept:
            self._forget_past(tasks)

    def end(self) -> None:
        self.ended += 1

    def cursor(self, task: asyncio.Task[Any] | None, busy: bool) -> Cursor | None:
        """Where ``task`` follows from; None: from the next call."""
        if task is not None:
            known = self._cursors.get(task)
            if known is not None:
                return known
            first = self._first_call_after(task)
            if first is not None:
                return first
        if busy:  # a task made during a call sees it from its beginning
            return Cursor(self.first_seq, self.ended)
        return None

    def seen(self, task: asyncio.Task[Any] | None, next_seq: int) -> None:
        """``task`` has seen every event before ``next_seq``: it goes on from the next call."""
        if task is not None:
            self._cursors[task] = Cursor(next_seq, self.ended)

    def _first_call_after(self, task: asyncio.Task[Any]) -> Cursor | None:
        """This Runner's first call that began once ``task`` was alive (None: none did)."""
        epoch = _loop_tasks().first_seen.get(task)
        if epoch is None:
            return None
        at = bisect.bisect_left(self._epochs, epoch)
        return self._starts[at] if at < len(self._starts) else None

    def _forget_past(self, tasks: _LoopTasks) -> None:
        """Drops the calls that began before every living task was seen: none follows them."""
        at = bisect.bisect_left(self._epochs, tasks.oldest())
        del self._epochs[:at], self._starts[:at]
        self._kept = max(8, 2 * len(self._epochs))
