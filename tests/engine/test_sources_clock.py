"""Time is passed in: each run stamps its events with its own clock, even side by side.

A replay gives its Runner a clock that returns the recorded times; nothing
process-wide changes, so replays and live runs in one process, interleaved
by the event loop, each keep their own times (and so, with timestamps shown
to the models, their own requests).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import ReplayReport, replay_run
from roost.engine.sources import Sources
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow
from tests.fakes.tools import FakeTool

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.events import Event

# Every user message shows its recorded time, so a wrong time changes the request.
FLOW = """
roost: 1
name: stamped
defaults: {provider: mock, timestamps: true, max_rounds: 6}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: note, arguments: {}}]}
      - one
      - {tool_calls: [{name: note, arguments: {}}]}
      - two
      - TERMINATE
tools:
  note: {python: "notes:note"}
agents:
  a: {role: You answer., functions: [note]}
  b: {role: You ask.}
start: {from: b, to: a, content: go}
"""


def ticking(year: int) -> Callable[[], str]:
    """A clock in ``year`` that moves a second at each reading."""
    seconds = itertools.count()

    def clock() -> str:
        second = next(seconds)
        return f"{year}-01-01T00:{second // 60:02d}:{second % 60:02d}.000000Z"

    return clock


async def record(run_id: str, clock: Callable[[], str] | None = None) -> list[Event]:
    log = MemoryLog(run_id)
    # A tool that waits lets the event loop switch to the other runs in the middle of a step.
    tool = FakeTool("note", "noted", delay=0.01)
    options = {"clock": clock} if clock is not None else {}
    sources = Sources(tools=lambda agent, text: [tool], **options)
    await Runner(flow=make_flow(FLOW), log=log, sources=sources).start()
    return log.load()


def years(events: list[Event]) -> set[str]:
    return {event.ts[:4] for event in events}


async def test_two_runs_side_by_side_keep_their_own_clocks() -> None:
    first, second = await asyncio.gather(
        record("first", ticking(2001)), record("second", ticking(2002))
    )
    assert years(first) == {"2001"} and years(second) == {"2002"}
    assert len({event.ts for event in first}) > 3  # stamped at each step, not once


async def test_replays_and_a_live_run_side_by_side_keep_their_own_times() -> None:
    first, second = await asyncio.gather(
        record("first", ticking(2001)), record("second", ticking(2002))
    )
    one, two, live = await asyncio.gather(
        replay_run(None, first), replay_run(None, second), record("live")
    )
    assert isinstance(one, ReplayReport) and isinstance(two, ReplayReport)
    assert one.identical, one.difference
    assert two.identical, two.difference
    assert [e.ts for e in one.events] == [e.ts for e in first]
    assert [e.ts for e in two.events] == [e.ts for e in second]
    assert years(live).isdisjoint({"2001", "2002"})  # the live run kept the real time
