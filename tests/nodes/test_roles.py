"""Roles and director prompts read ``last``: the latest message their node sees."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from roost.engine import Runner
from roost.errors import FlowError
from roost.events import MessageEvent, SelectEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from tests.engine.conftest import messages, pair, runner_for

# The writer's second draft is its role echoed: the critic's notes, read from its data.
REVIEW = """\
roost: 1
name: review
defaults: {provider: team}
providers:
  team:
    kind: scripted
    replies:
      - first draft
      - '{"verdict": "revise", "notes": "say where"}'
      - {echo: system}
      - '{"verdict": "approve", "notes": "fine"}'
agents:
  writer:
    role: >-
      Writes.{% if last.data %} {{ last.from }} said {{ last.data.verdict }}:
      {{ last.data.notes }}{% else %} First: {{ last.content }}{% endif %}
  critic:
    role: Reviews.
    reply_format:
      type: object
      properties: {verdict: {enum: [approve, revise]}, notes: {type: string}}
      required: [verdict, notes]
  USER: {role: a person}
channels:
  desk:
    members: [writer, critic]
    max_rounds: 4
    director: {strategy: round_robin}
    transitions:
      writer: [critic]
      critic:
        - to: writer
          when: {field: verdict, equals: revise}
start: {from: USER, to: desk, content: Announce it.}
"""


def said(text: str) -> list[tuple[str, str]]:
    flow = load_flow_text(textwrap.dedent(text), "review.yaml")
    log = MemoryLog("r")
    asyncio.run(Runner(flow=flow, log=log).start())
    return [(e.from_, e.content) for e in log.load() if isinstance(e, MessageEvent)]


def test_a_role_reads_the_structured_data_of_the_latest_message_it_sees() -> None:
    messages = said(REVIEW)
    assert messages[3] == ("writer", "Writes. critic said revise: say where")


def test_the_first_reply_sees_the_start_message() -> None:
    messages = said(REVIEW.replace("- first draft", "- {echo: system}"))
    assert messages[1] == ("writer", "Writes. First: Announce it.")


def test_between_two_agents_last_is_the_latest_message_of_the_pair() -> None:
    pair = """\
    roost: 1
    name: pair
    providers:
      a: {kind: scripted, replies: [{echo: system}]}
      b: {kind: scripted, replies: [{echo: system}, TERMINATE]}
    agents:
      asker: {provider: a, role: "I answer {{ last.from }} who said {{ last.content }}"}
      teller: {provider: b, role: "I heard {{ last.content }}"}
    start: {from: teller, to: asker, content: hello}
    """
    messages = said(pair)
    assert messages[1:3] == [
        ("asker", "I answer teller who said hello"),
        ("teller", "I heard I answer teller who said hello"),
    ]


def test_a_director_prompt_reads_the_latest_message_into_its_channel() -> None:
    # The director's answer is its prompt echoed: the member who did not speak last.
    text = """\
    roost: 1
    name: desk
    defaults: {provider: team}
    providers:
      team: {kind: scripted, replies: [one, two, three]}
      pick: {kind: scripted, replies: [{echo: last}], when_exhausted: repeat_last}
    agents:
      writer: {role: writes}
      critic: {role: reviews}
      USER: {role: a person}
    channels:
      desk:
        members: [writer, critic]
        max_rounds: 3
        director:
          allow_repeat: true
          strategy: llm
          provider: pick
          prompt: "{% if last.from == 'writer' %}critic{% else %}writer{% endif %}"
    start: {from: USER, to: desk, content: Go}
    """
    flow = load_flow_text(textwrap.dedent(text), "desk.yaml")
    log = MemoryLog("d")
    asyncio.run(Runner(flow=flow, log=log).start())
    picks = [(e.chosen, e.by) for e in log.load() if isinstance(e, SelectEvent)]
    assert picks == [("writer", "llm"), ("critic", "llm"), ("writer", "llm")]


def test_the_start_message_cannot_read_last() -> None:
    text = REVIEW.replace("content: Announce it.", "content: 'Go {{ last.content }}'")
    with pytest.raises(FlowError) as error:
        load_flow_text(text, "review.yaml")
    assert "the template reads 'last', which is not defined" in str(error.value)


async def test_roles_see_vars_name_members_and_now() -> None:
    text = pair("[{echo: system}, TERMINATE]").replace(
        "{role: You help.}",
        "{role: \"{{ vars.persona }} {{ name }} {{ members | join(',') }} {{ now[:4] }}\"}",
    )
    text = text.replace("name: pair", "name: pair\nvars: {persona: careful}")
    runner, log = runner_for(text)
    await runner.start()
    said = messages(log.load())[1][2]
    assert said.startswith("careful assistant assistant,USER 20")
