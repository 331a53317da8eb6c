"""The start message is a template: rendered before it is sent, checked like a role."""

from __future__ import annotations

from roost.engine import Runner
from roost.ports import MemoryLog
from tests.flow.conftest import load, problems

START = """
roost: 1
vars: {a: 2, b: 3}
defaults: {provider: p}
providers: {p: {kind: scripted, replies: [five]}}
agents: {USER: {role: A person.}, bot: {role: You add.}}
start: {from: USER, to: bot, content: "CONTENT"}
"""


async def test_the_start_message_is_a_template_rendered_before_it_is_sent() -> None:
    flow = load(
        START.replace("CONTENT", "How much is {{ vars.a }} + {{ vars.b }}, {{ members[1] }}?")
    )
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    said = [e.content for e in log.load() if e.type == "message"]  # type: ignore[attr-defined]
    assert said[0] == "How much is 2 + 3, bot?"
    log = MemoryLog("r2")  # a message given when the run starts is sent as written
    await Runner(flow=flow, log=log).start("{{ vars.a }}")
    first = next(e for e in log.load() if e.type == "message")
    assert first.content == "{{ vars.a }}"  # type: ignore[attr-defined]


def test_the_start_message_is_checked_like_a_role() -> None:
    found = problems(START.replace("CONTENT", "{{ vars.c }} and {% if %}"))
    assert found == [
        "flow.yaml:7:39: error: content of start: template does not parse: "
        "Expected an expression, got 'end of statement block'"
    ]
    found = problems(START.replace("CONTENT", "{{ vars.c }}"))
    assert found == ["flow.yaml:7:39: error: content of start: vars.c is not set under vars"]
