"""Tools through the engine: the scripted provider asks for them by name, in parallel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.engine import Runner
from roost.events import LlmCallEvent, MessageEvent, ToolResultEvent
from roost.ports import MemoryLog
from roost.tools.loader import load_module

from .conftest import DATA, make_flow

if TYPE_CHECKING:
    from roost.flow.models import Flow

TOOLS: dict[str, Any] = {
    "math": {"tools": {"add": {"python": "tools_mod:add"}}},
    "slow": {"python": "tools_mod:slow_echo", "timeout": 0.2},
    "meet": {"python": "tools_mod:meet"},
    "fail": {"python": "tools_mod:fail"},
    "weather": {"python": "tools_mod:loud", "description": "Weather forecast for a city"},
    "point": {"python": "tools_mod:point", "description": "Make a point"},
}


def flow_with(
    replies: list[Any],
    functions: list[str],
    *,
    start: str = "please compute",
    tools: dict[str, Any] | None = None,
    **agent: Any,
) -> Flow:
    return make_flow(
        {
            "defaults": {"provider": "mock"},
            "providers": {"mock": {"kind": "scripted", "replies": replies}},
            "tools": {**TOOLS, **(tools or {})},
            "agents": {
                "USER": {"interrupt": "ALWAYS"},
                "a": {"functions": functions, **agent},
            },
            "start": {"from": "USER", "to": "a", "content": start},
        }
    )


async def run(flow: Flow) -> list[Any]:
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    return log.load()


def tool_results(events: list[Any]) -> list[ToolResultEvent]:
    return [e for e in events if isinstance(e, ToolResultEvent)]


async def test_parallel_calls_keep_call_order_and_errors_go_on() -> None:
    calls = [
        {"name": "meet", "arguments": {"group": "run-overlap", "parties": 2}},
        {"name": "math__add", "arguments": {"a": 2, "b": 2}},
        {"name": "meet", "arguments": {"group": "run-overlap", "parties": 2}},
        {"name": "fail", "arguments": {"reason": "nope"}},
        {"name": "math__add", "arguments": {"a": "two"}},
        {"name": "not_mine", "arguments": {}},
        {"name": "slow", "arguments": {"text": "late", "delay": 2}},
    ]
    functions = ["math#add", "@@slow", "meet", "fail"]
    flow = flow_with([{"tool_calls": calls}, "4, probably"], functions)
    events = await run(flow)
    results = tool_results(events)
    assert [r.id for r in results] == [f"call_0_{i}" for i in range(7)]
    # The two meetings return only once both calls are running at the same time.
    assert results[0].content == results[2].content == "met run-overlap in roost-tool"
    assert results[1].content == "4"
    assert results[3].is_error and results[3].content == "ValueError: nope"
    assert results[4].is_error and "a: Input should be a valid integer" in results[4].content
    assert results[5].is_error and "not_mine" in results[5].content
    assert results[6].is_error and "timed out" in results[6].content
    assert [r.is_error for r in results[:3]] == [False, False, False]
    reply = [e for e in events if isinstance(e, MessageEvent)][-1]
    assert reply.content == "4, probably"


async def test_tool_limit_offers_the_best_matches_to_the_model() -> None:
    question = "what is the weather forecast? make a point"
    flow = flow_with(["ok"], ["math#add", "slow", "weather", "point"], start=question, tool_limit=2)
    events = await run(flow)
    offered = next(e for e in events if isinstance(e, LlmCallEvent)).tools
    assert offered == ("weather", "point")


async def test_direct_output_result_is_the_reply() -> None:
    shout = {"shout": {"python": "tools_mod:loud", "direct_output": True}}
    call = {"name": "shout", "arguments": {"word": "done"}}
    flow = flow_with([{"tool_calls": [call]}], ["shout"], tools=shout)
    events = await run(flow)
    assert [e.content for e in events if isinstance(e, MessageEvent)][-1] == "DONE!"


async def test_approval_runs_the_call_once_after_yes_in_a_new_runner() -> None:
    calls_made = load_module("tools_mod", DATA).CALLS
    calls_made.clear()
    gated = {"record": {"python": "tools_mod:record", "approval": "always"}}
    call = {"name": "record", "arguments": {"word": "launch"}}
    flow = flow_with([{"tool_calls": [call]}, "recorded it"], ["record"], tools=gated)
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "paused" and calls_made == []
    pending = state.pending
    assert getattr(pending, "reason", None) == "tool_approval"
    assert getattr(pending, "tool_call", {})["name"] == "record"
    state = await Runner(flow=flow, log=log).continue_("yes")  # as a new process would
    assert calls_made == ["launch"]
    assert [r.content for r in tool_results(log.load())] == ["recorded launch"]
    assert [e.content for e in log.load() if isinstance(e, MessageEvent)][-1] == "recorded it"


async def test_a_refused_call_is_not_run_and_the_model_hears_why() -> None:
    calls_made = load_module("tools_mod", DATA).CALLS
    calls_made.clear()
    gated = {"record": {"python": "tools_mod:record", "approval": "always"}}
    call = {"name": "record", "arguments": {"word": "launch"}}
    flow = flow_with([{"tool_calls": [call]}, "fine, not now"], ["record"], tools=gated)
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    await Runner(flow=flow, log=log).continue_("no, too risky")
    assert calls_made == []
    (result,) = tool_results(log.load())
    assert result.is_error and "too risky" in result.content


async def test_a_tool_that_calls_sys_exit_is_an_error_result_and_the_run_goes_on() -> None:
    exiting = {"quit": {"python": "tools_mod:exits"}, "close": {"python": "tools_mod:closes"}}
    calls = [
        {"name": "quit", "arguments": {}},
        {"name": "close", "arguments": {}},
        {"name": "math__add", "arguments": {"a": 1}},
    ]
    flow = flow_with(
        [{"tool_calls": calls}, "still here"], ["quit", "close", "math#add"], tools=exiting
    )
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start()
    results = tool_results(log.load())
    assert [(r.content, r.is_error) for r in results] == [
        ("quit exited (sys.exit(7))", True),
        ("GeneratorExit: closed by the tool", True),
        ("3", False),
    ]
    assert [e.content for e in log.load() if isinstance(e, MessageEvent)][-1] == "still here"
    assert state.status == "paused"  # back at USER, who always answers: not crashed, not running


async def test_arguments_that_break_a_declared_schema_never_reach_the_function() -> None:
    calls_made = load_module("tools_mod", DATA).CALLS
    calls_made.clear()
    schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    strict = {"record": {"python": "tools_mod:record_untyped", "parameters": schema}}
    calls = [
        {"name": "record", "arguments": {"word": 5}},
        {"name": "record", "arguments": {"word": "kept"}},
    ]
    flow = flow_with([{"tool_calls": calls}, "noted"], ["record"], tools=strict)
    results = tool_results(await run(flow))
    assert [(r.content, r.is_error) for r in results] == [
        ("invalid arguments for record: word: 5 is not of type 'string'", True),
        ("recorded kept", False),
    ]
    assert calls_made == ["'kept'"]
