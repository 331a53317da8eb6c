"""Runs drawn at random: a pair or a channel, scripted replies, a person's answers.

``scenarios`` draws one (with hypothesis) and ``drive`` runs it to its end, answering
pauses and retrying errors, keeping a copy of the run state after each batch of events.
The engine's state tests and the run status tests both check what such runs record.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from roost.engine import Runner, RunState
from roost.engine.sources import Sources
from roost.errors import RunStateError
from roost.nodes.directors import candidates
from roost.ports import MemoryLog
from roost.testing import unchecked_flow
from tests.fakes.tools import FakeTool

if TYPE_CHECKING:
    from roost.events import Event

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
        flow=unchecked_flow(flow_text(s), path="<string>"),
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
