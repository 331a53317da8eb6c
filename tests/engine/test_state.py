"""The run state is a pure function of the events (section 7)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roost.engine import Runner, RunState, fold
from roost.engine.sources import Sources
from roost.errors import RunStateError
from roost.events import Event, event_json, parse_event
from roost.nodes.directors import candidates
from roost.ports import MemoryLog
from roost.runstate import apply
from tests.engine.conftest import make_flow
from tests.fakes.tools import FakeTool

REPLY = st.sampled_from(
    [
        "hi",
        "ok",
        "INTERRUPT",
        "TERMINATE",
        "{error: boom}",
        "{echo: last}",
        "{echo: system}",
        "{tool_calls: [{name: t, arguments: {x: 1}}, {name: nope}]}",
    ]
)


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    replies = draw(st.lists(REPLY, min_size=1, max_size=12))
    kind = draw(st.sampled_from(["pair", "channel"]))
    strategy = draw(st.sampled_from(["round_robin", "random", "manual"]))
    always = draw(st.booleans())
    approval = draw(st.booleans())
    answers = draw(st.lists(st.sampled_from(["", "feedback", "a", "b", "c"]), max_size=10))
    return {
        "replies": replies,
        "kind": kind,
        "strategy": strategy,
        "always": always,
        "approval": approval,
        "answers": answers,
        "max_rounds": draw(st.integers(1, 6)),
    }


def flow_text(s: dict[str, Any]) -> str:
    replies = ", ".join(s["replies"])
    user = "{interrupt: ALWAYS}" if s["always"] else "{role: u}"
    target = "bot" if s["kind"] == "pair" else "room"
    return f"""
roost: 1
name: random
defaults: {{provider: mock, max_rounds: {s["max_rounds"]}}}
providers:
  mock: {{kind: scripted, replies: [{replies}], when_exhausted: cycle}}
agents:
  USER: {user}
  bot: {{role: the bot, functions: [t], max_tool_calls: 2}}
  a: {{role: a}}
  b: {{role: b}}
  c: {{role: c}}
channels:
  room:
    members: [a, b, c, USER]
    max_rounds: {s["max_rounds"] + 2}
    director: {{strategy: {s["strategy"]}, seed: 1}}
start: {{from: USER, to: {target}, content: start}}
"""


async def drive(s: dict[str, Any]) -> tuple[list[Event], list[RunState]]:
    log = MemoryLog("run")
    snapshots: list[RunState] = []
    runner: Runner

    def snap(event: Event) -> None:
        if event.seq == runner.state.next_seq - 1:  # the last event of a batch
            snapshots.append(copy.deepcopy(runner.state))

    tool = FakeTool("t", approval=s.get("approval", False))
    runner = Runner(
        flow=make_flow(flow_text(s)),
        log=log,
        on_event=snap,
        sources=Sources(tools=lambda a, t: [tool]),
    )
    state = await runner.start()
    answers = list(s["answers"])
    for _ in range(12):
        if state.status == "paused":
            answer = answers.pop(0) if answers else "a"
            try:
                state = await runner.continue_(answer)
            except RunStateError:  # a manual director asked for a name that is not a candidate
                found = candidates(runner.flow, state, "room")
                state = await runner.continue_(found[0])
        elif state.status == "error":
            state = await runner.retry()
        else:
            break
    return log.load(), snapshots


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_fold_at_every_batch_equals_the_live_state(s: dict[str, Any]) -> None:
    events, snapshots = asyncio.run(drive(s))
    assert [e.seq for e in events] == list(range(len(events)))
    for snapshot in snapshots:
        assert fold(events[: snapshot.next_seq]) == snapshot
    # every prefix folds, and folding through JSON gives the same state
    for end in range(len(events) + 1):
        fold(events[:end])
    reparsed = [parse_event(event_json(e)) for e in events]
    assert fold(reparsed) == fold(events)


def test_apply_is_incremental() -> None:
    events, _ = asyncio.run(
        drive(
            {
                "replies": ["hi", "TERMINATE"],
                "kind": "pair",
                "strategy": "round_robin",
                "always": False,
                "answers": [],
                "max_rounds": 5,
            }
        )
    )
    state = RunState()
    for event in events:
        apply(state, event)
    assert state == fold(events)
    assert state.status == "terminated"
    assert state.next_seq == len(events)
    assert [h.from_ for h in state.history] == ["USER", "bot", "USER"]


def test_an_empty_log_is_a_new_run() -> None:
    state = fold([])
    assert state.status == "new" and state.history == [] and state.next_seq == 0
    assert state.pending is None and state.provider_attempts == {}
