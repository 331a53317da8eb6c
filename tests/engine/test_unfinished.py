"""Runs whose process stopped anywhere: a retry on ANY prefix of the log finishes the run.

A step's events are appended together, but a process can die (or a log be torn
or forked) between any two of them. Whatever the prefix, ``retry()`` (or
``continue_`` when the prefix ends paused) must finish the run without
hanging, keep seqs contiguous, close every tool call exactly once, and do
what the last recorded event called for.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import TYPE_CHECKING, Any, ParamSpec

import pytest

from roost.engine import Runner, RunState, fold
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.errors import RoostError
from roost.events import Event, InterruptEvent
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, messages
from tests.fakes.tools import FakeTool, tools_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

PAIR = """
roost: 1
name: alternating
defaults: {provider: mock, max_rounds: 6}
providers:
  mock:
    kind: scripted
    when_exhausted: cycle
    replies:
      - {tool_calls: [{CALL}]}
      - here is what I found
agents:
  USER: {role: A person.}
  assistant: {role: You help., functions: [fast]}
start: {from: USER, to: assistant, content: Go}
"""
P = ParamSpec("P")
NAMED_CALL = "{id: c1, name: fast, arguments: {n: 1}}"  # the same id in every round
FRESH_CALL = "{name: fast, arguments: {n: 1}}"

PARALLEL = """
roost: 1
name: parallel
defaults: {provider: mock, max_rounds: 4}
providers:
  mock:
    kind: scripted
    when_exhausted: cycle
    replies:
      - {tool_calls: [{name: slow, arguments: {a: 1}}, {name: fast, arguments: {b: 2}},
                      {name: guarded, arguments: {c: 3}}]}
      - {error: flaky}
      - all three answered
agents:
  USER: {role: A person.}
  assistant: {role: You help., functions: [slow, fast, guarded]}
start: {from: USER, to: assistant, content: Go}
"""

CHANNEL = """
roost: 1
name: team
defaults: {provider: mock, max_rounds: 10}
providers:
  mock:
    kind: scripted
    when_exhausted: cycle
    replies: [{tool_calls: [{name: fast, arguments: {}}]}, a draft, looks fine]
  boss:
    kind: scripted
    when_exhausted: cycle
    replies: [writer, nobody, "@critic", nobody, still nobody, USER]
agents:
  USER: {role: A person., interrupt: ALWAYS}
  writer: {role: You write., functions: [fast]}
  critic: {role: You criticise.}
channels:
  room:
    members: [writer, critic, USER]
    max_rounds: 7
    director: {strategy: llm, provider: boss, seed: 3}
start: {from: USER, to: room, content: Write a poem}
"""


def tools() -> Any:
    return tools_of(
        FakeTool("fast"), FakeTool("slow", delay=0.01), FakeTool("guarded", approval=True)
    )


def answer_for(state: RunState) -> str:
    """What a person says at each kind of interrupt."""
    pending = state.pending
    assert isinstance(pending, InterruptEvent)
    if pending.reason == "tool_approval":
        return "yes"
    return "carry on"


async def finish(runner: Runner) -> RunState:
    """Drives the run to its end the way a person would: retry errors, answer interrupts."""
    state = runner.state
    for _ in range(60):
        if state.status == "terminated":
            return state
        if state.status == "paused":
            step = runner.continue_(answer_for(state))
        elif state.status == "new":
            step = runner.start()
        else:
            step = runner.retry()
        state = await asyncio.wait_for(step, timeout=10)
    raise AssertionError(f"the run did not end: {state}")


def check_log(events: Sequence[Event]) -> None:
    """Seqs contiguous; each tool call closed by exactly one result, before its id is reused."""
    assert [e.seq for e in events] == list(range(len(events)))
    open_ids: set[str] = set()
    for event in events:
        if event.type == "tool_call":
            assert event.id not in open_ids, f"tool call {event.id} opened twice"
            open_ids.add(event.id)
        elif event.type == "tool_result":
            assert event.id in open_ids, f"result {event.id} (seq {event.seq}) closes no call"
            open_ids.discard(event.id)
    assert not open_ids, f"tool calls without a result: {open_ids}"


async def full_run(text: str) -> list[Event]:
    log = MemoryLog("r")
    await finish(Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools())))
    events = log.load()
    check_log(events)
    return events


def watched(make: Callable[[], Awaitable[None]], seconds: float = 60) -> None:
    """Runs ``make()`` on its own event loop in a thread, failing if it has not ended in time.

    ``asyncio.wait_for`` cannot stop a loop that spins without awaiting anything;
    the thread lets this test fail instead of hanging the suite.
    """
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(make())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: the engine spins"
    if failure:
        raise failure[0]


async def retry_every_prefix(text: str) -> None:
    events = await full_run(text)
    assert {e.type for e in events} >= {"tool_call", "llm_call", "terminate"}
    for cut in range(len(events) + 1):
        log = MemoryLog("r", events[:cut])
        runner = Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools()))
        state = await finish(runner)
        got = log.load()
        assert got[:cut] == events[:cut]
        check_log(got)
        assert state.status == "terminated", cut
        assert fold(got) == state, cut


def guarded(test: Callable[P, Awaitable[None]]) -> Callable[P, None]:
    """An async test run under ``watched``: a spinning engine fails it instead of hanging."""

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        watched(lambda: test(*args, **kwargs), seconds=240)

    return run


@pytest.mark.parametrize(
    "text",
    [PAIR.replace("{CALL}", NAMED_CALL), PAIR.replace("{CALL}", FRESH_CALL), PARALLEL, CHANNEL],
    ids=["reused-ids", "fresh-ids", "parallel", "channel"],
)
@guarded
async def test_a_retry_on_every_prefix_finishes_the_run(text: str) -> None:
    await retry_every_prefix(text)


@guarded
async def test_the_reported_hang_cut_after_a_text_answer() -> None:
    text = PAIR.replace("{CALL}", NAMED_CALL)
    events = await full_run(text)
    cut = next(
        i + 1
        for i, e in enumerate(events)
        if e.type == "llm_call" and e.response and not e.response.tool_calls
    )
    assert events[cut].type == "message"
    log = MemoryLog("r", events[:cut])
    state = await asyncio.wait_for(
        Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools())).retry(), 10
    )
    assert state.status == "terminated"
    redone = log.load()[cut:]
    # The recorded answer is the reply: no model is asked for it again.
    assert [e.type for e in redone[:2]] == ["retry", "message"]
    assert redone[1].content == "here is what I found"


@guarded
async def test_an_id_reused_across_rounds_runs_its_tool_each_round() -> None:
    text = PAIR.replace("{CALL}", NAMED_CALL).replace("here is what I found", "TERMINATE")
    text = text.replace(
        "- {tool_calls", "- {tool_calls: [" + NAMED_CALL + "]}\n      - {tool_calls"
    )
    fast = FakeTool("fast")
    log = MemoryLog("r")
    state = await asyncio.wait_for(
        Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools_of(fast))).start(),
        timeout=10,
    )
    assert state.status == "terminated"
    assert len(fast.calls) == 2
    check_log(log.load())


@guarded
async def test_an_approval_is_asked_again_when_a_later_round_reuses_the_id() -> None:
    call = "{tool_calls: [{id: g1, name: guarded, arguments: {}}]}"
    text = f"""
    roost: 1
    name: approvals
    defaults: {{provider: mock}}
    providers:
      mock: {{kind: scripted, replies: [{call}, {call}, TERMINATE]}}
    agents:
      USER: {{role: A person.}}
      assistant: {{role: You help., functions: [guarded]}}
    start: {{from: USER, to: assistant, content: Go}}
    """
    guarded = FakeTool("guarded", approval=True)
    runner = Runner(
        flow=make_flow(text), log=MemoryLog("r"), sources=Sources(tools=tools_of(guarded))
    )
    assert (await runner.start()).status == "paused"
    state = await runner.continue_("yes")
    assert state.status == "paused"  # the second round's call waits for its own answer
    assert len(guarded.calls) == 1
    state = await runner.continue_("no")
    assert state.status == "terminated"
    assert len(guarded.calls) == 1


def _cut_after(events: list[Event], match: Any) -> int:
    return next(i + 1 for i, e in enumerate(events) if match(e))


async def test_a_cut_after_a_terminate_reply_terminates() -> None:
    text = """
    roost: 1
    name: short
    defaults: {provider: mock}
    providers: {mock: {kind: scripted, replies: [hi, TERMINATE, never said]}}
    agents: {a: {role: a}, b: {role: b}}
    start: {from: a, to: b, content: go}
    """
    log = MemoryLog("r")
    await Runner(flow=make_flow(text), log=log).start()
    events = log.load()
    cut = _cut_after(events, lambda e: e.type == "message" and e.content == "TERMINATE")
    stopped = MemoryLog("r", events[:cut])
    state = await Runner(flow=make_flow(text), log=stopped).retry()
    assert state.status == "terminated"
    assert [e.type for e in stopped.load()[cut:]] == ["retry", "terminate"]
    assert state.terminated_by == events[-1].node


async def test_a_cut_after_a_human_was_chosen_pauses_for_that_human() -> None:
    events = await full_run(CHANNEL)
    cut = _cut_after(events, lambda e: e.type == "select" and e.chosen == "USER")
    assert events[cut].type == "interrupt"
    log = MemoryLog("r", events[:cut])
    state = await Runner(flow=make_flow(CHANNEL), log=log, sources=Sources(tools=tools())).retry()
    assert state.status == "paused"
    pending = state.pending
    assert isinstance(pending, InterruptEvent)
    assert (pending.from_, pending.to) == ("USER", "room")
    assert not [e for e in log.load()[cut:] if e.type == "llm_call"]


async def test_a_cut_after_a_resume_records_the_persons_feedback() -> None:
    text = """
    roost: 1
    name: feedback
    defaults: {provider: mock}
    providers: {mock: {kind: scripted, replies: ["a question?", TERMINATE]}}
    agents:
      USER: {role: A person., interrupt: ALWAYS}
      bot: {role: b}
    start: {from: USER, to: bot, content: go}
    """
    log = MemoryLog("r")
    runner = Runner(flow=make_flow(text), log=log)
    await runner.start()
    await runner.continue_("my answer")
    events = log.load()
    cut = _cut_after(events, lambda e: e.type == "resume")
    stopped = MemoryLog("r", events[:cut])
    state = await Runner(flow=make_flow(text), log=stopped).retry()
    assert state.status == "terminated"
    assert messages(stopped.load()) == messages(events)


@guarded
async def test_a_round_that_records_nothing_is_an_error_not_a_spin() -> None:
    text = PAIR.replace("{CALL}", FRESH_CALL)
    events = await full_run(text)
    cut = _cut_after(events, lambda e: e.type == "tool_result")
    runner = Runner(
        flow=make_flow(text), log=MemoryLog("r", events[:cut]), sources=Sources(tools=tools())
    )
    runner.state.turn.awaiting.add("ghost")  # a round the state says is open but has no call
    with pytest.raises(RoostError, match="no progress"):
        await asyncio.wait_for(runner.retry(), timeout=10)


@guarded
async def test_a_run_retried_after_any_cut_replays_identically() -> None:
    for text in (CHANNEL, PARALLEL, PAIR.replace("{CALL}", NAMED_CALL)):
        await replay_each_cut(text)


async def replay_each_cut(text: str) -> None:
    events = await full_run(text)
    for cut in range(2, len(events)):
        log = MemoryLog("r", events[:cut])
        await finish(Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools())))
        # The fake tools answer the same every time, so the replay may run them again.
        report = await replay_run(make_flow(text), log.load(), live_tools=tools())
        assert report.identical, (cut, report.difference, report.stopped)


async def test_a_run_cut_anywhere_and_never_retried_replays_identical_up_to_its_cut() -> None:
    for text in (CHANNEL, PARALLEL, PAIR.replace("{CALL}", NAMED_CALL)):
        events = await full_run(text)
        for cut in range(2, len(events)):
            report = await replay_run(make_flow(text), events[:cut], live_tools=tools())
            assert report.identical, (cut, report.difference, report.stopped)
            assert report.unfinished == (fold(events[:cut]).status == "running"), cut
            assert len(report.events) == cut  # nothing made past the record's end


async def test_an_unfinished_run_still_shows_where_an_edited_flow_differs() -> None:
    text = PAIR.replace("{CALL}", NAMED_CALL)
    events = await full_run(text)
    cut = max(i for i in range(2, len(events)) if fold(events[:i]).status == "running")
    edited = make_flow(text.replace("You help.", "You help briefly."))
    report = await replay_run(edited, events[:cut], live_tools=tools())
    assert report.unfinished and not report.identical


LAST_CALL_ASKS_AGAIN = """
roost: 1
name: limit
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: fast, arguments: {}}]}
      - {tool_calls: [{name: fast, arguments: {}}]}
      - TERMINATE
agents:
  USER: {role: A person.}
  assistant: {role: You help., functions: [fast], max_tool_calls: 1}
start: {from: USER, to: assistant, content: Go}
"""


async def test_a_tool_asked_for_in_the_last_call_never_runs_even_when_the_process_stops_there() -> (
    None
):
    fast = FakeTool("fast")
    log = MemoryLog("r")
    await Runner(
        flow=make_flow(LAST_CALL_ASKS_AGAIN), log=log, sources=Sources(tools=tools_of(fast))
    ).start()
    events = log.load()
    last_call = [e for e in events if e.type == "llm_call"][1]  # offered no tools, asked anyway
    dead = MemoryLog("r", events[: last_call.seq + 1])  # the process stopped right after it
    again = FakeTool("fast")
    state = await Runner(
        flow=make_flow(LAST_CALL_ASKS_AGAIN), log=dead, sources=Sources(tools=tools_of(again))
    ).retry()
    assert (fast.calls, again.calls) == ([{}], [])  # one round, the limit: never a second
    assert messages(dead.load())[1] == ("assistant", "USER", "")
    assert state.status == "terminated"


async def test_a_stopped_answer_that_asked_for_tools_is_not_taken_for_the_reply() -> None:
    text = PAIR.replace("{CALL}", FRESH_CALL)
    log = MemoryLog("r")
    await Runner(flow=make_flow(text), log=log, sources=Sources(tools=tools())).start()
    events = log.load()
    asked = next(e for e in events if e.type == "llm_call")  # the answer with the tool call
    dead = MemoryLog("r", events[: asked.seq + 1])  # the process stopped right after it
    await Runner(flow=make_flow(text), log=dead, sources=Sources(tools=tools())).retry()
    # The tool runs, then the model is asked again: the recorded call gives no reply text.
    assert messages(dead.load())[1] == ("assistant", "USER", "here is what I found")


TWO_PROVIDERS = """
roost: 1
name: switch
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [TERMINATE]}
  old: {kind: scripted, replies: [from old]}
  new: {kind: scripted, replies: [from new]}
agents:
  USER: {role: A person.}
  assistant: {role: You help., provider: PROVIDER}
start: {from: USER, to: assistant, content: Go}
"""


async def test_a_retry_under_a_flow_with_another_provider_asks_that_provider() -> None:
    before, after = (TWO_PROVIDERS.replace("PROVIDER", name) for name in ("old", "new"))
    log = MemoryLog("r")
    await Runner(flow=make_flow(before), log=log).start()
    events = log.load()
    answered = next(e for e in events if e.type == "llm_call")
    dead = MemoryLog("r", events[: answered.seq + 1])  # stopped before the reply was recorded
    await Runner(flow=make_flow(after), log=dead).retry()
    # The recorded answer came from the entry the flow no longer uses: it is asked anew.
    assert messages(dead.load())[1] == ("assistant", "USER", "from new")
