"""``Runner.cancel``: the step in flight stops, is recorded, and ``retry`` redoes it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.engine.runner import CANCELLED
from roost.engine.sources import Sources
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
)
from roost.ports import MemoryLog
from roost.tools.base import ToolOutcome
from tests.engine.conftest import kinds, make_flow, messages

FLOW = """
roost: 1
name: cancel
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [unused]}
agents:
  USER: {role: u}
  bot: {role: b, functions: [wait]}
start: {from: USER, to: bot, content: go}
"""


@dataclass
class Model:
    """A provider that answers from ``replies``; a reply of None waits until cancelled."""

    replies: list[str | ToolCall | None]
    name: str = "mock"
    model: str = "m"
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    asked: int = 0

    async def complete(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        self.asked += 1
        reply = self.replies.pop(0)
        if reply is None:
            self.entered.set()
            await asyncio.Event().wait()  # never answers: only a cancel gets it out
        if isinstance(reply, ToolCall):
            message = AssistantMessage(content="", tool_calls=(reply,))
        else:
            message = AssistantMessage(content=str(reply))
        return ModelResponse(message=message, model="m", provider="mock")


@dataclass
class SlowTool:
    """A tool that runs until it is cancelled, counting its calls."""

    spec: ToolSpec = field(default_factory=lambda: ToolSpec(name="wait"))
    direct_output: bool = False
    approval: bool = False
    timeout: float = 3600.0
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    calls: int = 0

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        self.calls += 1
        self.entered.set()
        await asyncio.Event().wait()
        return ToolOutcome("never")


def runner(model: Model, tool: SlowTool | None = None) -> tuple[Runner, MemoryLog]:
    log = MemoryLog("c")
    tools = (lambda agent, text: [tool]) if tool is not None else (lambda agent, text: [])
    made = Runner(
        flow=make_flow(FLOW), log=log, sources=Sources(providers=lambda name: model, tools=tools)
    )
    return made, log


async def test_cancelling_a_model_call_records_an_error_that_retry_redoes() -> None:
    model = Model([None, "Hello again", "TERMINATE"])
    run, log = runner(model)
    step = asyncio.create_task(run.start())
    await asyncio.wait_for(model.entered.wait(), 5)
    assert run.busy
    assert run.cancel() is True
    state = await asyncio.wait_for(step, 5)

    assert state.status == "error"
    assert state.pending is not None and state.pending.content == CANCELLED
    assert (state.pending.from_, state.pending.to) == ("bot", "USER")
    assert kinds(log.load()) == ["run_start", "message", "error"]  # the call left no record
    assert not run.busy

    model.replies[:] = ["Hello again", "TERMINATE"]
    state = await run.retry()
    assert state.status == "terminated"
    assert messages(log.load())[1] == ("bot", "USER", "Hello again")


async def test_cancelling_a_tool_gives_its_call_a_cancelled_result() -> None:
    call = ToolCall(id="c1", name="wait", arguments={})
    tool = SlowTool()
    model = Model([call])
    run, log = runner(model, tool)
    step = asyncio.create_task(run.start())
    await asyncio.wait_for(tool.entered.wait(), 5)
    assert run.cancel() is True
    state = await asyncio.wait_for(step, 5)

    events = log.load()
    assert kinds(events)[-3:] == ["tool_call", "tool_result", "error"]
    result = events[-2]
    assert result.type == "tool_result" and result.is_error and result.content == CANCELLED
    assert state.status == "error"

    # The retry goes on from the tool's recorded result: the tool is not run again.
    model.replies[:] = ["It was stopped.", "TERMINATE"]
    state = await run.retry()
    assert state.status == "terminated"
    assert tool.calls == 1
    assert messages(log.load())[1] == ("bot", "USER", "It was stopped.")


async def test_cancel_without_a_step_in_flight_does_nothing() -> None:
    model = Model(["hi", "TERMINATE"])
    run, log = runner(model)
    assert run.cancel() is False
    await run.start()
    assert run.cancel() is False
    assert "error" not in kinds(log.load())


async def test_cancelling_the_callers_task_still_raises_and_records_nothing() -> None:
    # Only runner.cancel() is recorded; a task cancelled by its owner (Ctrl-C, a shutdown)
    # leaves the run as a stopped process would, to be retried.
    model = Model([None])
    run, log = runner(model)
    step = asyncio.create_task(run.start())
    await asyncio.wait_for(model.entered.wait(), 5)
    step.cancel()
    with pytest.raises(asyncio.CancelledError):
        await step
    assert kinds(log.load()) == ["run_start", "message"]
    assert run.state.status == "running"


# The same flow as a file would declare it: replay reads the tools from the recorded text.
DECLARED = FLOW.replace("start:", "tools:\n  wait: {python: 'slow:wait'}\nstart:")


async def test_a_run_with_a_cancelled_model_call_replays_identically() -> None:
    model = Model([None, "Hello again", "TERMINATE"])
    log = MemoryLog("c")
    tool = SlowTool()  # offered, never called
    run = Runner(
        flow=make_flow(DECLARED),
        log=log,
        sources=Sources(providers=lambda name: model, tools=lambda a, t: [tool]),
    )
    step = asyncio.create_task(run.start())
    await asyncio.wait_for(model.entered.wait(), 5)
    run.cancel()
    await asyncio.wait_for(step, 5)
    await run.retry()

    report = await replay_run(None, log.load())
    assert report.identical, report.difference
    assert kinds(report.events)[:4] == ["run_start", "message", "error", "retry"]


async def test_a_run_with_a_cancelled_tool_call_replays_identically() -> None:
    tool = SlowTool()
    model = Model([ToolCall(id="c1", name="wait", arguments={}), "Stopped.", "TERMINATE"])
    log = MemoryLog("c")
    run = Runner(
        flow=make_flow(DECLARED),
        log=log,
        sources=Sources(providers=lambda name: model, tools=lambda a, t: [tool]),
    )
    step = asyncio.create_task(run.start())
    await asyncio.wait_for(tool.entered.wait(), 5)
    run.cancel()
    await asyncio.wait_for(step, 5)
    await run.retry()

    report = await replay_run(None, log.load())
    assert report.identical, report.difference
    assert [e.content for e in report.events if e.type == "tool_result"] == [CANCELLED]
