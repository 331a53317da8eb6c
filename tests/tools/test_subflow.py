"""Sub-flow tools: child runs started by tool calls, through the engine and scripted replies."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from roost.engine import ChildRuns, Runner
from roost.engine.sources import Sources
from roost.events import Event, RunStartEvent, ToolResultEvent
from roost.flow import read_flow
from roost.ports import EventLog, MemoryLog
from roost.tools import ToolOutcome, check_flow_tools, toolbox_for

from .conftest import DATA, make_flow

if TYPE_CHECKING:
    from roost.flow.models import Flow


def parent_flow(replies: list[Any], **tools: Any) -> Flow:
    return make_flow(
        {
            "defaults": {"provider": "mock"},
            "providers": {"mock": {"kind": "scripted", "replies": replies}},
            "tools": {
                "parrot": {"flow": "echo_last.yaml"},
                "writer": {"flow": "echo_vars.yaml", "description": "Writes."},
                "add": {"python": "tools_mod:add"},
                **tools,
            },
            "agents": {
                "USER": {"interrupt": "ALWAYS"},
                "boss": {"functions": list({"parrot", "writer", "add", *tools})},
            },
            "start": {"from": "USER", "to": "boss", "content": "go"},
        }
    )


class Logs:
    """A child_log factory that keeps every log it made."""

    def __init__(self) -> None:
        self.made: dict[str, MemoryLog] = {}

    def __call__(self, run_id: str) -> EventLog:
        self.made[run_id] = MemoryLog(run_id)
        return self.made[run_id]


def results(events: list[Event]) -> dict[str, ToolResultEvent]:
    return {e.name: e for e in events if isinstance(e, ToolResultEvent)}


async def run(flow: Flow, logs: Logs, *, explicit: bool = True) -> MemoryLog:
    log = MemoryLog("parent")
    if explicit:
        toolbox = toolbox_for(flow, runner=ChildRuns(Runner, parent=log, child_log=logs))
        runner = Runner(flow=flow, log=log, child_log=logs, sources=Sources(tools=toolbox))
    else:
        runner = Runner(
            flow=flow, log=log, child_log=logs
        )  # its own toolbox, with itself as parent
    await runner.start()
    return log


def test_spec_comes_from_the_subflow() -> None:
    tools = {t.spec.name: t.spec for t in toolbox_for(parent_flow([]))("boss", "")}
    assert tools["parrot"].description == "Answers with the message it was started with."
    assert tools["parrot"].parameters["required"] == ["message"]
    writer = tools["writer"].parameters
    assert writer["properties"]["tone"]["type"] == "string"
    assert writer["properties"]["words"]["type"] == "integer"
    assert "required" not in writer  # echo_vars has a start message of its own


async def test_parallel_subflows_become_linked_child_runs() -> None:
    calls = [
        {"name": "parrot", "arguments": {"message": "hello there"}},
        {"name": "writer", "arguments": {"tone": "cheerful"}},
        {"name": "add", "arguments": {"a": 1, "b": 2}},
    ]
    flow = parent_flow([{"tool_calls": calls}, "all done"])
    logs = Logs()
    log = await run(flow, logs)
    found = results(log.load())
    assert found["parrot"].content == "hello there"
    assert found["writer"].content == "Write 10 words in a cheerful tone."
    assert found["add"].content == "3" and found["add"].child_run is None
    assert not any(r.is_error for r in found.values())
    for name in ("parrot", "writer"):
        child = logs.made[found[name].child_run or ""].load()
        start = child[0]
        assert isinstance(start, RunStartEvent)
        assert start.parent == "parent" and start.parent_tool_call == found[name].id
    names = {
        logs.made[r.child_run or ""].load()[0].flow.name for r in found.values() if r.child_run
    }  # type: ignore[union-attr]
    assert names == {"echo-last", "echo-vars"}


async def test_the_runners_own_toolbox_links_child_runs() -> None:
    flow = parent_flow([{"tool_calls": [{"name": "parrot", "arguments": {"message": "hi"}}]}, "ok"])
    logs = Logs()
    log = await run(flow, logs, explicit=False)
    result = results(log.load())["parrot"]
    assert result.content == "hi" and result.child_run
    start = logs.made[result.child_run].load()[0]
    assert isinstance(start, RunStartEvent)
    assert (start.parent, start.parent_tool_call) == ("parent", result.id)


async def test_child_runs_without_a_parent_run_in_memory() -> None:
    flow = parent_flow([])
    tools = toolbox_for(flow, runner=ChildRuns(Runner))("boss", "")
    parrot = next(t for t in tools if t.spec.name == "parrot")
    outcome = await parrot.call({"message": "alone"})
    assert outcome.content == "alone" and outcome.child_run


async def test_without_a_runner_a_subflow_is_listed_but_its_calls_are_errors() -> None:
    flow = parent_flow([])
    parrot = next(t for t in toolbox_for(flow)("boss", "") if t.spec.name == "parrot")
    assert parrot.spec.parameters["required"] == ["message"]
    outcome = await parrot.call({"message": "alone"})
    assert outcome.is_error and outcome.child_run is None
    assert "sub-flows run only as child runs of a run" in outcome.content


async def test_a_parent_log_links_the_child_runs() -> None:
    logs = Logs()
    flow = parent_flow([])
    runner = ChildRuns(Runner, parent=MemoryLog("p1"), child_log=logs)
    parrot = next(
        t for t in toolbox_for(flow, runner=runner)("boss", "") if t.spec.name == "parrot"
    )
    outcome = await parrot.call({"message": "yo"})
    assert outcome.content == "yo"
    start = logs.made[outcome.child_run or ""].load()[0]
    assert isinstance(start, RunStartEvent) and start.parent == "p1"


async def test_failing_subflow_and_bad_arguments_are_error_results() -> None:
    flow = parent_flow([], broken={"flow": "failing.yaml"})
    tools = {t.spec.name: t for t in toolbox_for(flow, runner=ChildRuns(Runner))("boss", "")}
    failed = await tools["broken"].call({"message": "work"})
    assert failed.is_error and "the model is down" in failed.content and failed.child_run
    missing = await tools["parrot"].call({})
    assert missing.is_error and "message" in missing.content
    unknown = await tools["writer"].call({"colour": "red"})
    assert unknown.is_error and "'colour'" in unknown.content


def test_check_reports_recursion_missing_and_invalid_subflows() -> None:
    flow = make_flow(
        {
            "tools": {
                "loop": {"flow": "loop_a.yaml"},
                "gone": {"flow": "no_such_flow.yaml"},
                "bad": {"flow": "invalid.yaml"},
                "fine": {"flow": "echo_last.yaml"},
            }
        }
    )
    messages = sorted(p.message for p in check_flow_tools(flow))
    assert len(messages) == 3
    assert messages[0].startswith("tool 'bad': sub-flow 'invalid.yaml' is invalid: ")
    assert messages[1] == "tool 'gone': sub-flow file 'no_such_flow.yaml' does not exist"
    assert messages[2] == (
        "tool 'loop': sub-flows call each other: loop_a.yaml -> loop_b.yaml -> loop_a.yaml"
    )


def test_a_flow_calling_itself_is_recursion() -> None:
    flow = read_flow(DATA / "loop_a.yaml")
    problems = check_flow_tools(flow)
    assert [p.message for p in problems] == [
        "tool 'ask_b': sub-flows call each other: loop_a.yaml -> loop_b.yaml -> loop_a.yaml"
    ]
    assert (problems[0].line, problems[0].col) != (1, 1)  # located at the tool's key
    assert Path(problems[0].file).name == "loop_a.yaml"


async def test_given_parameters_turn_other_arguments_into_the_message() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    flow = parent_flow([], trip={"flow": "echo_last.yaml", "parameters": schema})
    trip = next(
        t for t in toolbox_for(flow, runner=ChildRuns(Runner))("boss", "") if t.spec.name == "trip"
    )
    assert trip.spec.parameters == schema
    assert (await trip.call({"city": "Köln"})).content == '{"city": "Köln"}'
    both = await trip.call({"message": "Plan a trip.", "city": "Oslo"})
    assert both.content == 'Plan a trip.\n\n{"city": "Oslo"}'
    wrong = await trip.call({"city": 5})
    assert wrong == ToolOutcome("invalid arguments: city: 5 is not of type 'string'", is_error=True)
    assert wrong.child_run is None  # refused before any sub-flow ran


def test_given_parameters_that_are_not_json_schema_are_a_located_problem() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "town"}}}
    flow = parent_flow([], trip={"flow": "echo_last.yaml", "parameters": schema})
    assert [p.message for p in check_flow_tools(flow)] == [
        "tool 'trip': parameters is not a valid JSON Schema: "
        "properties.city.type: 'town' is not valid under any of the given schemas"
    ]


async def test_a_subflow_waiting_for_tool_approval_says_so() -> None:
    flow = parent_flow([], gated={"flow": "gated.yaml"})
    tools = toolbox_for(flow, runner=ChildRuns(Runner))("boss", "")
    gated = next(t for t in tools if t.spec.name == "gated")
    outcome = await gated.call({"message": "note it"})
    assert outcome.is_error and outcome.child_run
    assert "waiting for approval of its tool 'record'" in outcome.content
