"""A replay's sources answer each call with what the record says answered that call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.loading import load_flow
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from pathlib import Path

COUNTER = '''
COUNT = [0]


def tick() -> int:
    """The next number: each call gives a new one."""
    COUNT[0] += 1
    return COUNT[0]
'''

FLOW = """\
roost: 1
name: ticks
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: tick, arguments: {}}]}
      - {tool_calls: [{name: tick, arguments: {}}]}
      - "TERMINATE"
tools:
  tick: {python: "counter:tick", description: The next number}
agents:
  user: {}
  clock: {functions: [tick]}
start: {from: user, to: clock, content: tick twice}
"""


async def test_the_same_call_made_twice_replays_each_of_its_own_results(tmp_path: Path) -> None:
    (tmp_path / "counter.py").write_text(COUNTER)
    (tmp_path / "ticks.yaml").write_text(FLOW)
    log = MemoryLog("ticks")
    await Runner(flow=load_flow(tmp_path / "ticks.yaml"), log=log).start()
    recorded = log.load()
    assert [e.content for e in recorded if e.type == "tool_result"] == ["1", "2"]

    report = await replay_run(None, recorded)

    assert report.identical, report.difference
    assert [e.content for e in report.events if e.type == "tool_result"] == ["1", "2"]
