"""A case's simulated person: a model answering the person's turns from the person's side."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from roost.api import replay
from roost.store.sql import SqlStore
from tests.flowtest.conftest import cases, results
from tests.flowtest.support import ANGRY, with_actor

if TYPE_CHECKING:
    from pathlib import Path


def test_a_simulated_person_answers_each_turn_from_its_side_and_its_run_replays(
    support: Path, tmp_path: Path
) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(with_actor(cases(support, ANGRY)), store)
    assert result.failures == []
    log = store.log(result.attempts[0].run_id)
    events = log.load()
    said = [(e.from_, e.content) for e in events if e.type == "message"]
    assert said == [
        ("customer", "Where is my order 42?"),
        ("support", "Let me look."),
        ("customer", "This is taking forever!"),
        ("support", "It ships today."),
        ("customer", "It ships today."),  # {echo: last}: the last thing it was told
        ("support", "Anything else?"),
    ]
    calls = [e for e in events if e.type == "llm_call" and e.purpose == "simulated_person"]
    assert [(c.node, c.provider) for c in calls] == [("customer", "actor")] * 2
    assert asyncio.run(replay(log)).identical
    store.close()


def test_the_person_sees_its_own_words_as_its_turns_and_its_role_as_the_system() -> None:
    from roost.events import MessageEvent
    from roost.flowtest.person import OPENING, person_request
    from roost.flowtest.spec import User

    def said(seq: int, frm: str, to: str, text: str) -> MessageEvent:
        return MessageEvent(seq=seq, run="r", ts="t", from_=frm, to=to, content=text)

    user = User(role="You are cross.", provider="actor")
    events = [said(1, "customer", "support", "Hi"), said(2, "support", "customer", "Hello")]
    request = person_request(user, "customer", events)
    assert request.system.startswith("You are cross.\n\n")
    assert [(type(m).__name__, m.content) for m in request.messages] == [
        ("UserMessage", OPENING), ("AssistantMessage", "Hi"), ("UserMessage", "Hello"),
    ]  # fmt: skip


def test_approvals_answer_tool_approvals_and_the_person_the_rest(support: Path) -> None:
    flow = (support / "support.yaml").read_text()
    (support / "support.yaml").write_text(
        flow.replace("refund: {python:", "refund: {approval: always, python:")
    )
    refund = "{tool_calls: [{name: refund, arguments: {number: 42}}]}"
    case = (
        ANGRY.replace("[Let me look., It ships today.,", f"[{refund}, Refunded.,")
        .replace("user:\n", 'approvals: ["yes"]\nuser:\n')
        .replace("max_turns: 2", "max_turns: 1")
    )
    [result] = results(with_actor(cases(support, case)))
    assert result.failures == []
    without = case.replace('approvals: ["yes"]\n', "")  # the approval waits: no answers
    [waiting] = results(with_actor(cases(support, without)))
    assert waiting.failures == ['final: expected "Anything else?", got "Where is my order 42?"']
