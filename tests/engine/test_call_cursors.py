"""Runner.events(): every event of a call reaches a consumer, whenever the consumer first runs."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.errors import UsageError
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow

if TYPE_CHECKING:
    from roost.events import Event

# A hang would be the bug itself: the guard turns it into a failure instead of a stuck suite.
GUARD = 30

ASK = """
roost: 1
name: ask
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [four, own words, five, TERMINATE]}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: b}
start: {from: USER, to: bot, content: "2 + 2?"}
"""


def new_runner() -> tuple[Runner, MemoryLog]:
    log = MemoryLog("r")
    return Runner(flow=make_flow(ASK), log=log), log


async def collect(runner: Runner, into: list[Event]) -> None:
    async for event in runner.events():
        into.append(event)


async def test_a_consumer_made_before_start_sees_the_whole_call_though_it_runs_after() -> None:
    # The reported pattern: the consumer task has not run once when start() begins.
    runner, log = new_runner()
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))
    state = await runner.start()
    await asyncio.wait_for(task, GUARD)
    assert state.status == "paused"
    assert seen == log.load()
    assert [e.type for e in seen][-1] == "interrupt"


async def test_a_consumer_made_before_continue_sees_that_call_only() -> None:
    runner, log = new_runner()
    await runner.start()
    before = len(log.load())
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))
    await runner.continue_("thanks")
    await asyncio.wait_for(task, GUARD)
    assert seen == log.load()[before:]
    assert seen[0].type == "resume"


async def test_a_consumer_that_runs_between_calls_waits_for_the_next_one() -> None:
    runner, log = new_runner()
    await runner.start()
    before = len(log.load())
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))
    await asyncio.sleep(0)  # the consumer subscribes while nothing runs
    await runner.continue_("thanks")
    await asyncio.wait_for(task, GUARD)
    assert seen == log.load()[before:]


async def test_a_consumer_made_before_two_calls_sees_both() -> None:
    runner, log = new_runner()
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))
    await runner.start()
    await runner.continue_("thanks")
    await asyncio.wait_for(task, GUARD)
    assert seen == log.load()


async def test_every_consumer_sees_every_event_and_a_task_never_sees_one_twice() -> None:
    runner, log = new_runner()
    early: list[Event] = []
    first = asyncio.create_task(collect(runner, early))
    await asyncio.sleep(0)  # this one subscribes before start()
    late: list[Event] = []
    second = asyncio.create_task(collect(runner, late))
    await runner.start()
    await asyncio.wait_for(asyncio.gather(first, second), GUARD)
    assert early == late == log.load()

    pumped: list[list[Event]] = []

    async def pump() -> None:
        for _ in range(2):  # one iteration per call, in one task
            pumped.append([event async for event in runner.events()])

    pumping = asyncio.create_task(pump())
    await asyncio.sleep(0)  # the pump follows the first call live
    await runner.continue_("thanks")
    middle = len(log.load())
    await runner.continue_("")
    await asyncio.wait_for(pumping, GUARD)
    assert pumped == [log.load()[len(early) : middle], log.load()[middle:]]


async def test_a_call_that_fails_before_recording_anything_ends_the_iterator() -> None:
    runner, _ = new_runner()
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))
    with pytest.raises(UsageError):
        await runner.start(to="nobody")
    await asyncio.wait_for(task, GUARD)
    assert seen == []


async def test_the_caller_itself_reads_the_call_it_made() -> None:
    runner, log = new_runner()
    await runner.start()
    seen: list[Event] = []
    async with asyncio.timeout(GUARD):  # in this very task, unlike wait_for
        await collect(runner, seen)
    assert seen == log.load()


async def test_a_terminated_run_ends_the_iterator_at_once() -> None:
    runner, log = new_runner()
    await runner.start()
    while runner.state.status == "paused":
        await runner.continue_("")
    assert runner.state.status == "terminated"
    fresh = Runner(flow=make_flow(ASK), log=MemoryLog("r", log.load()))
    seen: list[Event] = []
    async with asyncio.timeout(GUARD):
        await collect(fresh, seen)
    assert seen == []


async def test_a_call_noted_between_steps_reaches_the_consumers_and_on_event() -> None:
    from roost.events import LlmCallEvent, now_iso

    runner, log = new_runner()
    shown: list[Event] = []
    runner.on_event = shown.append
    await runner.start()
    before = len(log.load())
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))
    await asyncio.sleep(0)  # the consumer waits for the next call
    judged = LlmCallEvent(seq=0, run="", ts=now_iso(), node="judge", provider="grader",
                          model="m", request_digest="sha256:0", purpose="judge")  # fmt: skip
    await runner.note(judged)
    await runner.continue_("thanks")
    await asyncio.wait_for(task, GUARD)
    assert seen == log.load()[before:]
    assert (seen[0].type, seen[0].seq) == ("llm_call", before)
    assert shown == log.load()


CHAT = """
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 1000}
providers:
  mock: {kind: scripted, replies: [noted], when_exhausted: repeat_last}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: b}
start: {from: USER, to: bot, content: hi}
"""


async def test_a_consumer_made_before_many_calls_still_sees_them_from_the_first() -> None:
    # Past calls are forgotten only once no living task can follow them.
    log = MemoryLog("r")
    runner = Runner(flow=make_flow(CHAT), log=log)
    await runner.start()
    before = len(log.load())
    seen: list[Event] = []
    task = asyncio.create_task(collect(runner, seen))  # it first runs after all the calls
    for turn in range(40):
        await runner.continue_(f"turn {turn}")
    await asyncio.wait_for(task, GUARD)
    assert seen == log.load()[before:]
    assert [e.type for e in seen].count("resume") == 40


async def test_another_runners_call_does_not_place_a_task_on_this_runner() -> None:
    # Which tasks were alive is noted once for the whole loop: a call of one run's
    # Runner must not make a task made later follow another run's earlier call.
    first, _ = new_runner()
    second, second_log = new_runner()
    await second.start()
    seen: list[Event] = []
    task = asyncio.create_task(collect(second, seen))
    await first.start()  # notes the new task, at a beginning second never had
    await asyncio.sleep(0)  # the consumer subscribes to second while nothing runs there
    before = len(second_log.load())
    await second.continue_("thanks")
    await asyncio.wait_for(task, GUARD)
    assert seen == second_log.load()[before:]
    assert seen[0].type == "resume"
