"""The tool loop inside a reply (section 6), against fake Tool objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from roost.engine import Runner, fold
from roost.engine.sources import Sources
from roost.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, messages
from tests.fakes.tools import FakeTool, tools_of

if TYPE_CHECKING:
    from roost.providers.base import TextCallback


def flow_with(replies: str, *, extra: str = "", agent_extra: str = "") -> str:
    return f"""
roost: 1
name: tools
defaults: {{provider: mock{extra}}}
providers:
  mock: {{kind: scripted, replies: {replies}}}
agents:
  USER: {{role: A person.}}
  assistant: {{role: You help., functions: [slow, fast]{agent_extra}}}
start: {{from: USER, to: assistant, content: Go}}
"""


def call(name: str, **arguments: Any) -> str:
    args = ", ".join(f"{k}: {v}" for k, v in arguments.items())
    return f"{{name: {name}, arguments: {{{args}}}}}"


async def run(
    text: str, *tools: FakeTool, log: MemoryLog | None = None
) -> tuple[Runner, MemoryLog]:
    log = log or MemoryLog("r")
    runner = Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools_of(*tools)))
    await runner.start()
    return runner, log


def results(log: MemoryLog) -> list[tuple[str, str, bool]]:
    return [(e.name, e.content, e.is_error) for e in log.load() if e.type == "tool_result"]


async def test_calls_run_concurrently_and_results_come_back_in_call_order() -> None:
    slow, fast = FakeTool("slow", delay=0.2), FakeTool("fast", delay=0.0)
    shared: list[str] = []
    slow.log = fast.log = shared
    replies = (
        f"[{{tool_calls: [{call('slow', n=1)}, {call('fast', n=2)}]}}, {{echo: last}}, TERMINATE]"
    )
    _runner, log = await run(flow_with(replies), slow, fast)
    assert shared == ["start", "start", "end", "end"]  # both started before either ended
    assert [r[0] for r in results(log)] == ["slow", "fast"]
    kinds = [e.type for e in log.load()]
    first_result = kinds.index("tool_result")
    assert kinds[first_result - 2 : first_result] == ["tool_call", "tool_call"]
    assert messages(log.load())[1][2] == "ok:{'n': 2}"  # the model saw the last result last
    ids = [e.id for e in log.load() if e.type == "tool_call"]
    assert ids == ["call_0_0", "call_0_1"]


async def test_errors_become_error_results_and_the_loop_goes_on() -> None:
    broken, slow = FakeTool("fast", fail=True), FakeTool("slow", delay=1.0, timeout=0.05)
    replies = f"[{{tool_calls: [{call('fast')}, {call('slow')}, {call('nope')}]}}, done, TERMINATE]"
    _runner, log = await run(flow_with(replies), broken, slow)
    got = results(log)
    assert got[0][0] == "fast" and got[0][2] and "it broke" in got[0][1]
    assert got[1][2] and "timed out" in got[1][1]
    assert got[2][2] and "no tool called 'nope'" in got[2][1]
    assert messages(log.load())[1] == ("assistant", "USER", "done")


async def test_the_tool_limit_ends_with_one_call_without_tools() -> None:
    fast = FakeTool("fast")
    again = f"{{tool_calls: [{call('fast')}]}}"
    replies = f"[{again}, {again}, {{echo: last}}, TERMINATE]"
    _runner, log = await run(flow_with(replies, agent_extra=", max_tool_calls: 2"), fast)
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert [c.tools for c in calls[:3]] == [("fast",), ("fast",), ()]
    assert "tool limit" in messages(log.load())[1][2]
    assert len(fast.calls) == 2


async def test_a_round_of_two_calls_counts_once_toward_the_tool_limit() -> None:
    fast = FakeTool("fast")
    both = f"{{tool_calls: [{call('fast', n=1)}, {call('fast', n=2)}]}}"
    replies = f"[{both}, {both}, {{echo: last}}, TERMINATE]"
    _runner, log = await run(flow_with(replies, agent_extra=", max_tool_calls: 2"), fast)
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert [c.tools for c in calls[:3]] == [("fast",), ("fast",), ()]
    assert fast.calls == [{"n": 1}, {"n": 2}, {"n": 1}, {"n": 2}]


async def test_a_direct_output_result_is_the_reply() -> None:
    fast = FakeTool("fast", result="straight", direct_output=True)
    replies = f"[{{tool_calls: [{call('fast', q=1)}]}}, TERMINATE]"
    _runner, log = await run(flow_with(replies), fast)
    assert messages(log.load())[1] == ("assistant", "USER", "straight:{'q': 1}")
    assert len([e for e in log.load() if e.type == "llm_call"]) == 2  # no call after the tool


async def test_a_failing_direct_output_tool_is_an_error_result_and_the_model_answers() -> None:
    broken = FakeTool("fast", fail=True, direct_output=True)
    replies = f"[{{tool_calls: [{call('fast')}]}}, The tool failed; sorry., TERMINATE]"
    _runner, log = await run(flow_with(replies), broken)
    assert results(log) == [("fast", "fast failed: RuntimeError: it broke", True)]
    # Only a result is the reply: the model sees the error and answers.
    assert messages(log.load())[1] == ("assistant", "USER", "The tool failed; sorry.")


async def test_approval_pauses_and_yes_runs_the_tool_exactly_once() -> None:
    fast = FakeTool("fast", approval=True)
    replies = f"[{{tool_calls: [{call('fast', x=1)}]}}, {{echo: last}}, TERMINATE]"
    text = flow_with(replies)
    runner, log = await run(text, fast)
    state = runner.state
    assert state.status == "paused"
    pending = state.pending
    assert pending is not None and pending.reason == "tool_approval"  # type: ignore[union-attr]
    assert pending.tool_call == {"id": "call_0_0", "name": "fast", "arguments": {"x": 1}}  # type: ignore[union-attr]
    assert fast.calls == []
    # A new runner (another process) answers yes.
    state = await Runner(
        flow=make_flow(text), log=log, sources=Sources(tools=tools_of(fast))
    ).continue_("yes")
    assert fast.calls == [{"x": 1}]
    assert messages(log.load())[1][2] == "ok:{'x': 1}"
    assert state.status == "terminated"
    assert fold(log.load()) == state


async def test_a_refused_call_is_given_to_the_model_as_the_refusal() -> None:
    fast = FakeTool("fast", approval=True)
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{echo: last}}, TERMINATE]"
    runner, log = await run(flow_with(replies), fast)
    await runner.continue_("no, too expensive")
    assert fast.calls == []
    assert results(log)[0][2] is True
    assert "no, too expensive" in messages(log.load())[1][2]


@pytest.mark.parametrize(
    ("answer", "runs"),
    [(" Yes ", True), ("YES", True), ("y", True), ("N", False), ("yes, but", False)],
)
async def test_yes_or_y_approves_and_anything_else_refuses(answer: str, runs: bool) -> None:
    fast = FakeTool("fast", approval=True)
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{echo: last}}, TERMINATE]"
    runner, log = await run(flow_with(replies), fast)
    await runner.continue_(answer)
    assert (fast.calls == [{}]) is runs
    assert results(log)[0][2] is not runs


async def test_long_results_are_cut_for_the_model_but_logged_whole() -> None:
    fast = FakeTool("fast", result="x" * 100)
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{echo: last}}, TERMINATE]"
    _runner, log = await run(flow_with(replies, extra=", tool_result_limit: 10"), fast)
    assert len(results(log)[0][1]) > 100
    shown = messages(log.load())[1][2]
    assert shown.startswith("xxxxxxxxxx\n[cut: the first 10 of")


class RawArgumentsProvider:
    """A provider whose first answer carries arguments that are not JSON."""

    name = "raw"
    model = "raw-model"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        self.requests.append(request)
        if len(self.requests) == 1:
            bad = ToolCall(id="c1", name="fast", raw_arguments="{not json")
            return ModelResponse(message=AssistantMessage(tool_calls=(bad,)))
        if len(self.requests) == 2:
            return ModelResponse(message=AssistantMessage(content=request.messages[-1].content))
        return ModelResponse(message=AssistantMessage(content="TERMINATE"))


async def test_arguments_that_are_not_json_give_an_error_result() -> None:
    fast = FakeTool("fast")
    provider = RawArgumentsProvider()
    log = MemoryLog("r")
    runner = Runner(
        flow=make_flow(flow_with("[]")),
        log=log,
        sources=Sources(tools=tools_of(fast), providers=lambda name: provider),
    )
    await runner.start()
    assert fast.calls == []
    assert "not valid JSON" in messages(log.load())[1][2]
    assert len(provider.requests[1].messages) == 3  # user, assistant with the call, tool result


async def test_retry_after_a_dead_process_closes_open_calls_and_goes_on() -> None:
    fast = FakeTool("fast")
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{echo: last}}, TERMINATE]"
    text = flow_with(replies)
    _runner, log = await run(text, fast)
    events = log.load()
    cut = next(i for i, e in enumerate(events) if e.type == "tool_result")
    dead = MemoryLog("r", events[:cut])  # the process died while the tool ran
    state = fold(dead.load())
    assert state.status == "running"
    again = FakeTool("fast")
    state = await Runner(
        flow=make_flow(text), log=dead, sources=Sources(tools=tools_of(again))
    ).retry()
    assert again.calls == []  # not run twice
    result = next(e for e in dead.load() if e.type == "tool_result")
    assert result.is_error and "stopped" in result.content
    assert state.status == "terminated"
    assert [e.type for e in dead.load()][cut] == "retry"


async def test_a_retry_after_a_provider_error_keeps_the_tool_results() -> None:
    fast = FakeTool("fast")
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{error: flaky}}, {{echo: last}}, TERMINATE]"
    runner, log = await run(flow_with(replies), fast)
    assert runner.state.status == "error"
    state = await runner.retry()
    assert len(fast.calls) == 1  # not run again
    assert messages(log.load())[1] == ("assistant", "USER", "ok:{}")
    assert state.status == "terminated"
    assert fold(log.load()) == state


async def test_a_result_exactly_at_the_limit_is_shown_whole() -> None:
    fast = FakeTool("fast", result="x" * 6)  # its result is "xxxxxx:{}", nine characters
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{echo: last}}, TERMINATE]"
    _runner, log = await run(flow_with(replies, extra=", tool_result_limit: 9"), fast)
    assert messages(log.load())[1][2] == "xxxxxx:{}"


async def test_a_result_one_past_the_limit_is_cut() -> None:
    fast = FakeTool("fast", result="x" * 6)
    replies = f"[{{tool_calls: [{call('fast')}]}}, {{echo: last}}, TERMINATE]"
    _runner, log = await run(flow_with(replies, extra=", tool_result_limit: 8"), fast)
    assert messages(log.load())[1][2] == "xxxxxx:{\n[cut: the first 8 of 9 characters are shown]"


async def test_no_tool_rounds_allowed_means_one_call_without_tools_and_no_limit_note() -> None:
    fast = FakeTool("fast")
    replies = "[{echo: last}, TERMINATE]"
    _runner, log = await run(flow_with(replies, agent_extra=", max_tool_calls: 0"), fast)
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert [c.tools for c in calls] == [(), ()]
    # No round ran, so there is no limit to speak of: the model sees the start message last.
    assert messages(log.load())[1] == ("assistant", "USER", "Go")
    assert fast.calls == []


async def test_an_agent_without_tools_and_no_rounds_allowed_keeps_its_first_answer() -> None:
    text = flow_with(f"[{{tool_calls: [{call('fast')}]}}, later, TERMINATE]").replace(
        ", functions: [slow, fast]", ", max_tool_calls: 0"
    )
    _runner, log = await run(text)
    events = log.load()
    # The answer asked for a tool it was not offered and no round may run: it is the reply.
    assert [e.node for e in events if e.type == "llm_call"] == ["assistant", "USER", "assistant"]
    assert not [e for e in events if e.type in ("tool_call", "tool_result")]
    assert messages(events)[1:3] == [("assistant", "USER", ""), ("USER", "assistant", "later")]
