"""Background sub-flow tasks: started by a tool call, delivered later as a message.

A ``flow:`` tool with ``background: true`` starts its child run as an asyncio
task and answers the call at once; the tool loop records a ``background``
event (the task id, the agent, whom it was answering, the child run). The
run goes on. When it comes to a point where it would stop moving (a pause
for a person, the end of the run) with tasks still open, it waits for the
first of them to end instead, records its result as a ``message`` to the
agent that started it (with a ``background`` field naming the task), and lets
that agent answer; only when no task is open does it pause or end.

What is open is read from the log (``RunState.background``), so a process
that continues a run stopped with tasks open (killed, Ctrl-C, paused for an
approval) knows them: ``BackgroundTasks.revive`` picks each child run up from
its own log: a child that ended meanwhile is delivered as it ended, one left
mid-step is retried, one with no log is delivered as failed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from roost.events import BackgroundEvent, BackgroundNote, Event, MessageEvent

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Sequence

    from roost.ports import EventLog

LOST = (
    "the child run {run} of background task {task} has no log to continue from: it did not finish"
)


class Outcome(Protocol):
    """What a child run gave: a tool outcome's text and whether it failed."""

    @property
    def content(self) -> str: ...

    @property
    def is_error(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Finished:
    """A background task that ended, and what it gave."""

    task: BackgroundEvent
    content: str
    is_error: bool = False


class BackgroundSource(Protocol):
    """Where the interpreter gets the results of the run's open background tasks."""

    def revive(self, open_tasks: Iterable[BackgroundEvent]) -> None:
        """Makes sure every open task is running (or known to have ended)."""
        ...

    async def next_finished(self, open_tasks: Sequence[BackgroundEvent]) -> Finished:
        """Waits for the first of ``open_tasks`` to end."""
        ...


def started_text(tool: str, task: str, child_run: str) -> str:
    """The tool result of a call that started a background task: what the model is told."""
    return (
        f"Started {tool} in the background as task {task} (run {child_run}). Its result "
        "will arrive as a message when it ends; go on meanwhile."
    )


def delivery_text(finished: Finished) -> str:
    """The message that delivers a task's result to the agent that started it."""
    task = finished.task
    how = "failed" if finished.is_error else "finished"
    return f"[background task {task.task} ({task.tool}, run {task.child_run}) {how}]\n\n" + (
        finished.content
    )


def delivery_note(finished: Finished) -> BackgroundNote:
    """The ``background`` field of the delivering message."""
    status = "failed" if finished.is_error else "done"
    return BackgroundNote(task=finished.task.task, child_run=finished.task.child_run, status=status)


def over_cap(
    open_tasks: int, own: int, agent: str, flow_cap: int, agent_cap: int | None
) -> str | None:
    """Why ``agent`` may not start another background task now, if it may not.

    ``open_tasks`` are the run's tasks started and not yet delivered, ``own`` the
    agent's among them.
    """
    if open_tasks >= flow_cap:
        return (
            f"{open_tasks} background tasks are open already (max_background {flow_cap}): "
            "this one was not started; start it again once a result has arrived"
        )
    if agent_cap is not None and own >= agent_cap:
        return (
            f"{agent} has {own} background tasks open already (max_background {agent_cap}): "
            "this one was not started; start it again once a result has arrived"
        )
    return None


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One background task of a run as ``roost show`` lists it."""

    task: str
    tool: str
    agent: str
    child_run: str
    status: str  # running, done or failed


def task_rows(events: Iterable[Event]) -> list[TaskRow]:
    """The run's background tasks in the order they started, with how each stands."""
    started: dict[str, BackgroundEvent] = {}
    ended: dict[str, str] = {}
    for event in events:
        if isinstance(event, BackgroundEvent):
            started[event.task] = event
        elif isinstance(event, MessageEvent) and event.background is not None:
            ended[event.background.task] = event.background.status
    return [
        TaskRow(task.task, task.tool, task.agent, task.child_run, ended.get(key, "running"))
        for key, task in started.items()
    ]


class BackgroundTasks:
    """The child runs of a run's background tasks, running as asyncio tasks.

    Kept by the Runner across its calls, so that a task started in one step
    can be waited for in another. ``resume`` picks up a task this process did
    not start (the run was continued in another process).
    """

    def __init__(
        self, resume: Callable[[BackgroundEvent], Awaitable[Outcome]], started: Callable[[], int]
    ) -> None:
        self._resume = resume
        self._started = started  # how many tasks the run's log shows started
        self._jobs: dict[str, asyncio.Task[tuple[str, bool]]] = {}
        self._numbered = 0
        self.logs: dict[str, EventLog] = {}  # child run id -> its log, while this process lives

    def new_id(self) -> str:
        """A task id not used in the run: ``bg-1``, ``bg-2``, ..."""
        self._numbered = max(self._numbered, self._started()) + 1
        return f"bg-{self._numbered}"

    def launch(self, task: str, work: Awaitable[Outcome]) -> None:
        """Runs ``work`` (a child run to its end) as the task ``task``."""
        self._jobs[task] = asyncio.ensure_future(_guarded(work))

    def revive(self, open_tasks: Iterable[BackgroundEvent]) -> None:
        for task in open_tasks:
            if task.task not in self._jobs:
                self._jobs[task.task] = asyncio.ensure_future(_guarded(self._resume(task)))

    async def next_finished(self, open_tasks: Sequence[BackgroundEvent]) -> Finished:
        self.revive(open_tasks)
        jobs = [self._jobs[task.task] for task in open_tasks]
        if not any(job.done() for job in jobs):
            await asyncio.wait(jobs, return_when=asyncio.FIRST_COMPLETED)
        # Of those that ended, the one started first: the same order for the same timing.
        task = next(task for task, job in zip(open_tasks, jobs, strict=True) if job.done())
        content, is_error = self._jobs.pop(task.task).result()
        return Finished(task, content, is_error)

    def cancel(self) -> None:
        """Stops every child still running (their logs keep what they did)."""
        for job in self._jobs.values():
            job.cancel()
        self._jobs.clear()


async def _guarded(work: Awaitable[Outcome]) -> tuple[str, bool]:
    """``work``'s text and whether it failed; what it raised is a failure (never a crash)."""
    try:
        outcome = await work
    except Exception as exc:
        from roost.engine.calls import error_text  # loaded only when a task fails this way

        return f"the background task failed: {error_text(exc)}", True
    return outcome.content, outcome.is_error
