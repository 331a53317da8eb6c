"""start -> chat -> reply between two agents and into a channel (section 3)."""

from __future__ import annotations

import textwrap

from roost.engine import fold
from tests.engine.conftest import kinds, messages, runner_for

PAIR = """
roost: 1
name: pair
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: ["Hello", "Fine", "TERMINATE"]}
agents:
  USER: {role: A person.}
  assistant: {role: You help.}
start: {from: USER, to: assistant, content: Hi}
"""


async def test_two_agents_talk_until_terminate() -> None:
    runner, log = runner_for(PAIR)
    state = await runner.start()
    assert state.status == "terminated"
    assert messages(log.load()) == [
        ("USER", "assistant", "Hi"),
        ("assistant", "USER", "Hello"),
        ("USER", "assistant", "Fine"),
        ("assistant", "USER", "TERMINATE"),
    ]
    events = log.load()
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[-1].type == "terminate" and events[-1].node == "USER"
    assert state.provider_attempts == {"mock": 3}
    assert fold(events) == state


async def test_the_run_start_event_records_the_flow_text() -> None:
    runner, log = runner_for(PAIR)
    await runner.start()
    first = log.load()[0]
    assert first.type == "run_start"
    assert first.flow.text == textwrap.dedent(PAIR)
    assert first.flow.hash.startswith("sha256:")
    assert kinds(log.load())[1:3] == ["message", "llm_call"]
