"""Sub-flows as child runs: the ``SubflowRunner`` a Runner hands its toolbox.

A ``flow:`` tool's sub-flow runs as a run of its own, on a log linked to the
parent run and the tool call that started it; a background task's child runs
on by itself, and one this process did not start is resumed from its log.
Each child's Runner is made by the ``runner`` it is given (the Runner class:
this module never imports the Runner, which imports it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from roost.engine.background import BackgroundTasks, started_text
from roost.engine.flows import flow_in_force
from roost.engine.sources import Sources
from roost.errors import RoostError
from roost.ports import EventLog, MemoryBank, MemoryLog, StampedLog
from roost.runstate import RunState, fold

if TYPE_CHECKING:
    from roost.events import BackgroundEvent
    from roost.flow.models import Flow
    from roost.providers.base import Provider
    from roost.tools.base import ToolOutcome

ChildLogs = Callable[[str], EventLog]


class ChildRunner(Protocol):
    """What a child run needs of its Runner."""

    async def start(self, message: str | None = None) -> RunState: ...

    async def retry(self) -> RunState: ...


class RunnerMaker(Protocol):
    def __call__(
        self,
        *,
        flow: Flow,
        log: EventLog,
        sources: Sources | None = None,
        child_log: ChildLogs | None = None,
        budget: float | Mapping[str, float] | None = None,
    ) -> ChildRunner: ...


class ChildRuns:
    """Runs ``flow:`` tools as child runs: the ``SubflowRunner`` a Runner hands its toolbox.

    Each sub-flow runs with its own Runner on a log from ``child_log`` (memory
    by default) whose ``run_start`` names ``parent``'s run and the tool call,
    to completion or to its first interrupt; its last message is the tool's
    result. Made without a parent, the child runs stand alone. A sub-flow with a
    ``memory:`` section keeps and recalls its entries in ``memory``, the parent's bank.
    """

    def __init__(
        self,
        runner: RunnerMaker,
        *,
        parent: EventLog | None = None,
        child_log: ChildLogs | None = None,
        providers: Callable[[str], Provider] | None = None,
        memory: MemoryBank | None = None,
        background: BackgroundTasks | None = None,
        budget_left: Callable[[], dict[str, float] | None] | None = None,
    ) -> None:
        self._runner = runner  # makes each child's Runner (``roost.engine.Runner``)
        self._parent = parent
        # What the parent's budget has left: the child run's own limits.
        self._budget_left = budget_left
        self._child_log: ChildLogs = child_log or MemoryLog
        self._providers = providers
        self._memory = memory
        self._background = background
        self._claimed: set[str] = set()
        self.logs: dict[str, EventLog] = {}  # child run id -> its log, for callers and tests

    async def run_subflow(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Runs ``flow`` as a child run and returns its last message (an error as an error)."""
        log = self._new_child(tool, arguments)
        return await self._run_child(flow, log, message)

    async def start_background(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Starts ``flow`` as a child run going on by itself; answers with the task's id."""
        from roost.tools.base import ToolOutcome

        background = self._background
        if background is None:
            text = (
                f"the sub-flow tool {tool!r} cannot run in the background here: background "
                "tasks run only within a Runner's run"
            )
            return ToolOutcome(text, is_error=True)
        log = self._new_child(tool, arguments)
        background.logs[log.run_id] = log
        task = background.new_id()
        background.launch(task, self._run_child(flow, log, message))
        return ToolOutcome(started_text(tool, task, log.run_id), child_run=log.run_id, task=task)

    async def resume(self, task: BackgroundEvent) -> ToolOutcome:
        """The outcome of a background task's child run, picked up from its log.

        A child that ended is read as it ended; one a stopped process left mid-step
        is retried to its end; one with no log is a failure.
        """
        from roost.engine.background import LOST
        from roost.engine.subflow import outcome_of
        from roost.flow import load_flow_text
        from roost.tools.base import ToolOutcome

        run = task.child_run
        known = self._background.logs.get(run) if self._background is not None else None
        log = known or self._child_log(run)
        events = log.load()
        record = flow_in_force(events)
        state = fold(events)
        if record is None or state.status == "new":
            return ToolOutcome(LOST.format(run=run, task=task.task), is_error=True, child_run=run)
        start = events[0]
        own = self._parent is None or getattr(start, "parent", None) == self._parent.run_id
        if state.status == "running" and not own:
            # A fork's task: the child run is its origin's, which only that run continues.
            text = f"the child run {run} of background task {task.task} did not finish"
            return ToolOutcome(text, is_error=True, child_run=run)
        if state.status == "running":
            flow = load_flow_text(record.text, record.path)
            runner = self._runner(
                flow=flow,
                log=log,
                child_log=self._child_log,
                sources=Sources(providers=self._providers),
            )
            try:
                await runner.retry()
            except RoostError as exc:
                text = f"sub-flow {record.name!r} failed: {exc}"
                return ToolOutcome(text, is_error=True, child_run=run)
            events = log.load()
        return outcome_of(events, record.name, run)

    def _child_budget(self, flow: Flow) -> dict[str, float] | None:
        """The child's limits: what the parent has left, or the child's own when lower."""
        left = self._budget_left() if self._budget_left is not None else None
        if not left:
            return None
        own = flow.budget.limits() if flow.budget is not None else {}
        return {limit: min(value, own.get(limit, value)) for limit, value in left.items()}

    def _new_child(self, tool: str, arguments: dict[str, Any]) -> EventLog:
        """The log of a new child run, linked to the parent run and the call that starts it."""
        # Only a flow with a flow: tool gets here: the tools package is loaded already.
        from roost.engine.subflow import new_child_id, open_call
        from roost.tools.subflow import current_tool_call

        call_id = current_tool_call.get()
        if call_id is None and self._parent is not None:
            call_id = open_call(self._parent.load(), tool, arguments, self._claimed)
        parent_id = self._parent.run_id if self._parent is not None else None
        log = StampedLog(
            self._child_log(new_child_id()), parent=parent_id, parent_tool_call=call_id
        )
        self.logs[log.run_id] = log
        return log

    async def _run_child(self, flow: Flow, log: EventLog, message: str | None) -> ToolOutcome:
        from roost.engine.subflow import outcome_of
        from roost.tools.base import ToolOutcome

        try:
            runner = self._runner(
                flow=flow,
                log=log,
                child_log=self._child_log,
                budget=self._child_budget(flow),
                sources=Sources(providers=self._providers, memory=self._memory),
            )
            await runner.start(message)
        except RoostError as exc:
            text = f"sub-flow {flow.name!r} failed: {exc}"
            return ToolOutcome(text, is_error=True, child_run=log.run_id)
        return outcome_of(log.load(), flow.name, log.run_id)
