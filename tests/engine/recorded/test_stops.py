"""Where the recorded process stopped: a run resumed after its process died, or stopped at any
step and retried, replays identically."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.ports import MemoryLog
from tests.engine.conftest import TOOLS, TOOLS_MODULE, flow_from

if TYPE_CHECKING:
    from pathlib import Path

CYCLE = """\
roost: 1
name: cycle
defaults: {provider: mock, max_rounds: 6}
providers:
  mock:
    kind: scripted
    when_exhausted: cycle
    replies:
      - tool_calls:
          - {id: c1, name: add, arguments: {a: 1, b: 1}}
          - {id: c2, name: add, arguments: {a: 2, b: 2}}
      - "a reply"
tools:
  add: {python: "replay_tools:add", description: Add two integers}
agents:
  a: {functions: [add]}
  b: {functions: [add]}
start: {from: a, to: b, content: go}
"""


async def test_a_run_resumed_after_its_process_died_replays_identically(tmp_path: Path) -> None:
    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE)
    flow = flow_from(TOOLS, tmp_path)
    whole = MemoryLog("rec")
    await Runner(flow=flow, log=whole).start()
    events = whole.load()
    # The process died after recording the tool calls, before their results.
    cut = next(i for i, e in enumerate(events) if e.type == "tool_call") + 2
    survivor = MemoryLog("rec", events[:cut])
    state = await Runner(flow=flow, log=survivor).retry()
    assert state.status == "terminated"
    resumed = survivor.load()
    assert any(e.type == "retry" for e in resumed)
    report = await replay_run(flow, resumed)
    assert report.identical, report.difference


async def test_a_run_stopped_at_any_event_and_retried_replays_identically(tmp_path: Path) -> None:
    """Every step boundary (a process killed there, or a fork made there), resumed, replayed."""
    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE)
    flow = flow_from(CYCLE, tmp_path)
    whole = MemoryLog("rec")
    await Runner(flow=flow, log=whole).start()
    events = whole.load()
    resumed = 0
    for cut in range(2, len(events)):
        if events[cut].ts == events[cut - 1].ts:
            continue  # inside a step: no process stops there, and forks refuse it
        log = MemoryLog("rec", events[:cut])
        runner = Runner(flow=flow, log=log)
        if runner.state.status not in ("running", "error"):
            continue
        await runner.retry()
        report = await replay_run(flow, log.load())
        assert report.identical, (cut, report.difference)
        resumed += 1
    assert resumed > 10
