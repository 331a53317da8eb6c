"""The example flow in flows/tools runs offline: a Python tool, a sub-flow and an MCP server."""

from __future__ import annotations

from pathlib import Path

from roost.engine import Runner
from roost.engine.subflow import ChildRuns
from roost.eventlog import EventLog, MemoryLog
from roost.events import ToolCallEvent, ToolResultEvent
from roost.flow import load_flow
from roost.tools import check_flow_tools, toolbox_for

EXAMPLE = Path(__file__).parents[2] / "flows" / "tools" / "tools.yaml"


def test_example_flow_checks_clean() -> None:
    assert check_flow_tools(load_flow(EXAMPLE)) == []


async def test_example_flow_runs_offline() -> None:
    flow = load_flow(EXAMPLE)
    log = MemoryLog("demo")
    children: dict[str, EventLog] = {}

    def child_log(run_id: str) -> EventLog:
        children[run_id] = MemoryLog(run_id)
        return children[run_id]

    toolbox = toolbox_for(flow, runner=ChildRuns(parent=log, child_log=child_log))
    runner = Runner(flow, log, tools=toolbox, child_log=child_log)
    try:
        state = await runner.start()
    finally:
        await toolbox.aclose()
    assert state.status == "terminated"
    events = log.load()
    calls = [e.name for e in events if isinstance(e, ToolCallEvent)]
    assert calls == ["math__add", "units__convert", "summarize"]
    found = {e.name: e for e in events if isinstance(e, ToolResultEvent)}
    assert found["math__add"].content == "215"
    assert found["units__convert"].content == "215 km = 133.6 mi"
    assert found["summarize"].content.startswith("Summary: ")
    assert found["summarize"].child_run in children
    assert not any(e.is_error for e in found.values())
