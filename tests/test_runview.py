"""``roost.Pause`` and the run's view: what ``roost.run`` hands its callers is a value."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply

import roost
from roost.errors import EventLogError
from roost.flow import load_flow_text
from roost.pricing import RunCost
from roost.runview import PauseAnswer
from roost.testing import call, flow_from_yaml
from tests.fakes.flows import MANUAL_CHANNEL

if TYPE_CHECKING:
    from collections.abc import Mapping

Said = str | PauseAnswer | None
ROOT = Path(__file__).resolve().parent.parent
ASSISTANT = ROOT / "flows" / "assistant.yaml"

# A helper whose tool needs the person's approval.
APPROVE = """
    roost: 1
    tools:
      median: {python: "statistics:median", description: The median., approval: always}
    agents:
      USER: {role: Someone with data.}
      helper: {role: You use tools., functions: [median]}
    start: {from: USER, to: helper, content: "The median of 2, 4 and 9?"}
"""
APPROVE_REPLIES: list[str | Mapping[str, Any]] = [
    call("median", data=[2, 4, 9]),
    "The median is 4.",
    "TERMINATE",
]

# A person asked at every turn, who may also answer through the scripted provider.
PERSON = """
    roost: 1
    agents:
      USER: {role: A person., interrupt: ALWAYS}
      helper: {role: You help.}
    start: {from: USER, to: helper, content: "Hello"}
"""


def _results(log: roost.MemoryLog) -> list[tuple[str, bool]]:
    return [(e.content, e.is_error) for e in log.load() if isinstance(e, roost.ToolResultEvent)]


async def test_approve_runs_the_call_awaiting_approval() -> None:
    seen: list[roost.Pause] = []

    def answer(pause: roost.Pause) -> Said:
        seen.append(pause)
        return pause.approve()

    log = roost.MemoryLog("approve")
    result = await roost.run(
        flow_from_yaml(APPROVE, replies=APPROVE_REPLIES), answer=answer, log=log
    )
    assert [(p.kind, p.node, p.to) for p in seen] == [("tool_approval", "helper", "USER")]
    assert [(c["name"], c["arguments"]) for c in seen[0].tool_calls] == [
        ("median", {"data": [2, 4, 9]})
    ]
    assert _results(log) == [("4", False)]
    assert result.status == "terminated" and result.answer == "The median is 4."


async def test_refuse_gives_the_model_the_reason_and_runs_nothing() -> None:
    log = roost.MemoryLog("refuse")
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    await roost.run(flow, answer=lambda pause: pause.refuse("too slow"), log=log)
    assert _results(log) == [("The person did not approve this call: too slow", True)]
    log = roost.MemoryLog("refuse-plain")
    await roost.run(flow, answer=lambda pause: pause.refuse(), log=log)
    assert _results(log) == [("The person did not approve this call.", True)]


def test_a_refusal_whose_reason_reads_as_yes_is_refused() -> None:
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    with pytest.raises(roost.RoostError, match="reads as approving"):
        roost.run_sync(flow, answer=lambda pause: pause.refuse(" Yes "))


async def test_a_persons_turn_is_answered_with_text_or_let_answer() -> None:
    replies = ["Hi, how can I help?", "Why do owls hoot?", "I answer myself.", "Ok."]
    flow = flow_from_yaml(PERSON, replies=replies)
    kinds: list[str] = []

    def answer(pause: roost.Pause) -> Said:
        kinds.append(pause.kind)
        if len(kinds) == 1:
            return "Tell me a joke."
        return pause.let_answer() if len(kinds) == 2 else None

    log = roost.MemoryLog("person")
    result = await roost.run(flow, answer=answer, log=log)
    said = [(e.from_, e.content) for e in result.history if e.state == "success"]
    assert said[2] == ("USER", "Tell me a joke.")
    # let_answer: the person's node answered through its own (scripted) provider.
    assert said[4] == ("USER", "I answer myself.")
    assert kinds == ["person", "person", "person"] and result.status == "paused"
    user_calls = [e for e in log.load() if isinstance(e, roost.LlmCallEvent) and e.node == "USER"]
    assert len(user_calls) == 1


async def test_a_manual_choice_lists_the_members_and_is_answered_by_name() -> None:
    flow = flow_from_yaml(MANUAL_CHANNEL, replies=["I am y."])
    seen: list[roost.Pause] = []

    def answer(pause: roost.Pause) -> str:
        seen.append(pause)
        return "y"

    log = roost.MemoryLog("manual")
    result = await roost.run(flow, answer=answer, log=log)
    assert [(p.kind, p.node, p.choices) for p in seen] == [("manual_choice", "team", ("x", "y"))]
    selects = [(e.chosen, e.by) for e in log.load() if isinstance(e, roost.SelectEvent)]
    assert selects == [("y", "manual")]
    assert result.last_message is not None and result.last_message.from_ == "y"


def test_a_method_for_another_kind_of_pause_is_refused_in_one_line() -> None:
    with pytest.raises(roost.RoostError, match="approve\\(\\) answers a tool approval"):
        roost.run_sync(ASSISTANT, answer=lambda pause: pause.approve())
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    with pytest.raises(roost.RoostError, match="let_answer\\(\\) answers a person"):
        roost.run_sync(flow, answer=lambda pause: pause.let_answer())


def test_the_answer_of_an_earlier_pause_is_refused() -> None:
    first: list[Said] = []

    def answer(pause: roost.Pause) -> Said:
        if not first:
            first.append(pause.let_answer())
            return "Four of us, in a park."
        return first[0]

    with pytest.raises(roost.RoostError, match="an earlier pause"):
        roost.run_sync(ASSISTANT, answer=answer)


async def test_a_caller_changing_what_it_was_given_cannot_change_the_run() -> None:
    asked: list[roost.Pause] = []

    def answer(pause: roost.Pause) -> Said:
        asked.append(pause)
        if len(asked) > 1:
            return None  # asked again: the approval did not reach the call it was for
        # The calls, the interrupt and the history handed out are copies, or frozen.
        pause.tool_calls[0]["id"] = "someone-else"
        pause.tool_calls[0]["arguments"]["data"].append(1000)
        assert pause.pending.tool_call is not None
        pause.pending.tool_call["arguments"]["data"].append(1000)
        interrupt = pause.history[-1]
        assert isinstance(interrupt, roost.InterruptEvent) and interrupt.tool_call is not None
        interrupt.tool_call["id"] = "someone-else"
        with pytest.raises(dataclasses.FrozenInstanceError):
            pause.run.status = "terminated"  # type: ignore[misc]
        return pause.approve()

    log = roost.MemoryLog("mutate")
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    result = await roost.run(flow, answer=answer, log=log)
    calls = [e for e in log.load() if isinstance(e, roost.ToolCallEvent)]
    assert [(c.id, c.arguments) for c in calls] == [(calls[0].id, {"data": [2, 4, 9]})]
    assert calls[0].id != "someone-else" and _results(log) == [("4", False)]
    assert result.status == "terminated" and len(asked) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.answer = "changed"  # type: ignore[misc]
    assert isinstance(result.history, tuple)


def test_the_result_has_the_answer_usage_and_cost(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.script(Reply("Hello! TERMINATE", usage=FakeUsage(prompt=1_000_000, completion=0)))
        flow = load_flow_text(
            f"""
roost: 1
providers:
  gpt:
    kind: openai
    model: gpt-test
    base_url: "{server.url}/v1"
    api_key: sk-test
    price: {{input: 2.0, output: 8.0}}
agents:
  USER: {{role: A person., interrupt: ALWAYS}}
  bot: {{role: You greet., provider: gpt}}
start: {{from: USER, to: bot, content: Hi}}
""",
            str(tmp_path / "greet.yaml"),
        )
        result = roost.run_sync(flow)
    assert isinstance(result, roost.RunView) and result.status == "terminated"
    assert result.answer == "Hello!"  # the marker taken off
    assert (result.usage.prompt_tokens, result.usage.calls) == (1_000_000, 1)
    assert result.cost == RunCost(amount=2.0)
    assert repr(result).startswith("RunView(run_id=")


async def test_replay_and_flow_of_from_the_front_door() -> None:
    log = roost.MemoryLog("recorded")
    answers = iter(["Four of us, in a park.", "Thanks!"])
    await roost.run(ASSISTANT, answer=lambda pause: next(answers), log=log)
    report = await roost.replay(log)
    assert report.identical and report.compared == len(log.load())
    assert (await roost.replay(log.load(), ASSISTANT)).identical
    assert not (await roost.replay(log, ROOT / "flows" / "hello.yaml")).identical
    flow = roost.flow_of(log)
    assert (flow.name, flow.path) == (
        "assistant",
        "flows/assistant.yaml",
    ) or flow.name == "assistant"
    assert roost.flow_of(log.load(), shown=True).text == flow.text
    with pytest.raises(EventLogError, match="empty: the run has no run_start"):
        roost.flow_of(roost.MemoryLog("empty"))
