"""Sub-flows as child runs, through ``ChildRuns`` itself: a run of its own on a linked log,
its last message the tool's result (``tests/tools/test_subflows.py`` goes through the tools)."""

from __future__ import annotations

from roost.engine import ChildRuns, Runner
from roost.engine.background import LOST
from roost.events import BackgroundEvent, RunStartEvent, ToolCallEvent
from roost.ports import EventLog, MemoryLog
from tests.engine.conftest import make_flow

ECHO = """
roost: 1
name: echo-last
providers:
  p: {kind: scripted, replies: [{echo: last}]}
agents:
  USER: {interrupt: ALWAYS}
  parrot: {provider: p}
start: {from: USER, to: parrot}
"""
FAILING = ECHO.replace("[{echo: last}]", "[{error: the model is down}]")


class Logs:
    """A child_log factory that keeps every log it made."""

    def __init__(self) -> None:
        self.made: dict[str, MemoryLog] = {}

    def __call__(self, run_id: str) -> EventLog:
        self.made[run_id] = MemoryLog(run_id)
        return self.made[run_id]


def parent_asking(tool: str, arguments: dict[str, str]) -> MemoryLog:
    """A parent run's log whose agent has called ``tool`` and awaits its result."""
    log = MemoryLog("p1")
    call = ToolCallEvent(
        seq=0, run="p1", ts="", agent="boss", id="c7", name=tool, arguments=arguments
    )
    log.append([call])
    return log


async def test_a_subflow_runs_on_a_log_linked_to_the_parent_and_the_call() -> None:
    logs = Logs()
    children = ChildRuns(Runner, parent=parent_asking("parrot", {"message": "hi"}), child_log=logs)
    outcome = await children.run_subflow(
        make_flow(ECHO), "hi", tool="parrot", arguments={"message": "hi"}
    )
    assert outcome.content == "hi" and not outcome.is_error and outcome.child_run
    start = logs.made[outcome.child_run].load()[0]
    assert isinstance(start, RunStartEvent)
    assert (start.parent, start.parent_tool_call) == ("p1", "c7")
    assert list(children.logs) == [outcome.child_run]


async def test_a_child_that_stops_at_an_error_is_an_error_result() -> None:
    outcome = await ChildRuns(Runner).run_subflow(
        make_flow(FAILING), "work", tool="broken", arguments={}
    )
    assert outcome.is_error and outcome.child_run
    assert outcome.content.startswith("sub-flow 'echo-last' failed:")
    assert "the model is down" in outcome.content


async def test_without_background_tasks_a_background_start_is_refused() -> None:
    outcome = await ChildRuns(Runner).start_background(
        make_flow(ECHO), "hi", tool="parrot", arguments={}
    )
    assert outcome.is_error and outcome.child_run is None
    assert "cannot run in the background here" in outcome.content


async def test_a_task_whose_child_left_no_log_is_delivered_as_failed() -> None:
    task = BackgroundEvent(
        seq=3,
        run="p1",
        ts="",
        task="bg-1",
        agent="boss",
        to="USER",
        tool="parrot",
        call="c7",
        child_run="gone",
    )
    outcome = await ChildRuns(Runner, child_log=Logs()).resume(task)
    assert outcome.is_error and outcome.child_run == "gone"
    assert outcome.content == LOST.format(run="gone", task="bg-1")
