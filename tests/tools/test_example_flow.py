"""The example flow in flows/tools runs offline: a Python tool, a sub-flow and an MCP server."""

from __future__ import annotations

from pathlib import Path

from roost.engine import Runner
from roost.eventlog import EventLog, MemoryLog
from roost.events import ToolCallEvent, ToolResultEvent
from roost.flow import read_flow
from roost.tools import check_flow_tools

EXAMPLE = Path(__file__).parents[2] / "flows" / "tools" / "tools.yaml"


def test_example_flow_checks_clean() -> None:
    assert check_flow_tools(read_flow(EXAMPLE)) == []


async def test_example_flow_runs_offline() -> None:
    flow = read_flow(EXAMPLE)
    log = MemoryLog("demo")
    children: dict[str, EventLog] = {}

    def child_log(run_id: str) -> EventLog:
        children[run_id] = MemoryLog(run_id)
        return children[run_id]

    state = await Runner(flow, log, child_log=child_log).start()
    assert state.status == "terminated"
    events = log.load()
    calls = [e.name for e in events if isinstance(e, ToolCallEvent)]
    assert calls == ["math__add", "units__convert", "summarize"]
    found = {e.name: e for e in events if isinstance(e, ToolResultEvent)}
    assert found["math__add"].content == "215"
    assert found["units__convert"].content == "215 km = 133.6 mi"
    assert found["summarize"].content.startswith("Summary: ")
    child = children[found["summarize"].child_run or ""].load()
    assert child[0].parent == "demo"  # type: ignore[union-attr]
    assert not any(e.is_error for e in found.values())
