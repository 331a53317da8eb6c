"""Replay offers the tools a live run offered, from the flow's declarations and the record.

The run is recorded for real: a stdio MCP server written with the SDK (its
tools known only to it) and a Python tool module. The replay starts neither,
yet builds the same requests, a ``tool_limit`` included.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import ReplayReport, replay_run
from roost.events import Event, LlmCallEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from roost.flow.models import Flow

DATA = Path(__file__).resolve().parents[2] / "tools" / "data"

FLOW = """\
roost: 1
name: tooled
defaults: {{provider: mock, max_rounds: 2}}
providers:
  mock:
    kind: scripted
    replies:
      - tool_calls:
          - {{name: calc__add, arguments: {{a: 2, b: 3}}}}
          - {{name: py_add, arguments: {{a: 1}}}}
      - five
      - {{tool_calls: [{{name: calc__greet, arguments: {{name: Ada}}}}]}}
      - greeted
mcp_servers:
  calc: {{command: {python}, args: [mcp_stdio_server.py]}}
tools:
  calc: {{mcp: calc, timeout: 20}}
  py_add: {{python: "tools_mod:add", approval: never}}
agents:
  user: {{role: You ask.}}
  helper: {{role: You help., functions: [calc, py_add], tool_limit: {limit}}}
start: {{from: user, to: helper, content: please add two and three}}
"""


def recorded(folder: Path, limit: int) -> tuple[str, list[Event]]:
    for name in ("mcp_stdio_server.py", "tools_mod.py", "sibling_helper.py"):
        shutil.copy(DATA / name, folder / name)
    text = FLOW.format(python=sys.executable, limit=limit)
    (folder / "flow.yaml").write_text(text)
    log = MemoryLog("rec")
    asyncio.run(Runner(flow=load_flow_text(text, str(folder / "flow.yaml")), log=log).start())
    return text, log.load()


def offered(events: list[Event]) -> list[tuple[str, ...]]:
    return [e.tools for e in events if isinstance(e, LlmCallEvent)]


def test_a_whole_server_and_a_python_tool_replay_identical(tmp_path: Path) -> None:
    _, events = recorded(tmp_path, limit=10)
    assert offered(events)[0] == ("calc__add", "calc__greet", "calc__explode", "calc__wait",
                                  "calc__pid", "py_add")  # fmt: skip
    assert any(e.type == "tool_result" and e.content == "5" for e in events)  # type: ignore[union-attr]
    report = _replay(events)
    assert report.identical, report.difference


def test_a_tool_limit_replays_the_tools_the_record_offered(tmp_path: Path) -> None:
    _, events = recorded(tmp_path, limit=2)
    first = offered(events)[0]
    assert len(first) == 2 and "calc__add" in first
    report = _replay(events)
    assert report.identical, report.difference


def test_a_tool_taken_away_shows_in_the_first_request(tmp_path: Path) -> None:
    text, events = recorded(tmp_path, limit=10)
    edited = text.replace("functions: [calc, py_add]", "functions: [calc]")
    report = _replay(events, load_flow_text(edited, str(tmp_path / "edited.yaml")))
    assert report.difference is not None
    old, new = report.difference.recorded, report.difference.replayed
    assert isinstance(old, LlmCallEvent) and isinstance(new, LlmCallEvent)
    assert old.seq == 2 and "py_add" in old.tools and "py_add" not in new.tools


def _replay(events: list[Event], flow: Flow | None = None) -> ReplayReport:
    return asyncio.run(replay_run(flow, events))
