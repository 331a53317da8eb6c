"""Who answers in a channel, as ``roost run`` and ``roost show`` name them: the flow's person."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.fakes.commands import roost

if TYPE_CHECKING:
    from pathlib import Path

INTERRUPTING = """
roost: 1
name: room
defaults: {provider: team}
providers:
  team: {kind: scripted, replies: [a draft, "I need a person here. INTERRUPT"]}
agents:
  USER: {role: the person}
  writer: {role: writes}
  critic: {role: checks}
channels:
  room: {members: [writer, critic], max_rounds: 4, director: {strategy: round_robin}}
start: {from: USER, to: room, content: write it}
"""


def test_a_member_saying_interrupt_in_a_channel_is_named_as_who_waits(tmp_path: Path) -> None:
    flow = tmp_path / "room.yaml"
    flow.write_text(INTERRUPTING)
    result = roost("run", str(flow), "--no-input", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    said = "paused: critic said INTERRUPT in room and waits for you: your answer goes to critic"
    assert said in result.stdout, result.stdout
    assert "answer as room" not in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("person", "who"),
    [("USER: {role: the person}", "you"), ("USER: {interrupt: ALWAYS, role: the person}", "USER")],
)
def test_a_person_s_answer_in_a_channel_names_who_answered_whom(
    tmp_path: Path, person: str, who: str
) -> None:
    from roost.cli.markdown import transcript_markdown
    from roost.store.jsonl import JsonlLog

    flow = tmp_path / "room.yaml"
    text = INTERRUPTING.replace("USER: {role: the person}", person)
    flow.write_text(text.replace('INTERRUPT"]', 'INTERRUPT", shorter it is, TERMINATE]'))
    events = tmp_path / "run.jsonl"
    ran = roost("run", str(flow), "--answer", "shorter", "--events", str(events), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert f"{who} in room → critic: shorter" in ran.stdout.splitlines(), ran.stdout
    assert "room → critic" not in ran.stdout.replace(f"{who} in room → critic", "")
    shown = roost("show", str(events), cwd=tmp_path).stdout
    assert f"⏸ critic waits for {who} (in room)" in shown, shown
    assert f"↪ {who} in room answered critic: shorter" in shown, shown
    assert f"{who} in room → critic: shorter" in shown, shown
    log = [json.loads(line) for line in events.read_text().splitlines()]
    recorded = [(e["type"], e["from"], e["to"]) for e in log if e["type"] in ("resume", "message")]
    assert ("resume", "room", "critic") in recorded  # the log itself is unchanged
    assert ("message", "room", "critic") in recorded
    markdown = transcript_markdown(JsonlLog(events).load())
    assert f"*critic waits for {who} (in room).*" in markdown, markdown
    assert f"**{who} in room → critic**\n\nshorter" in markdown, markdown
