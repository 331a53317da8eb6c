"""A run's answer: the latest message with text once a marker at its end is taken off.

One function (``roost.runstate.run_answer``, ``RunState.answer``) says it for
batch results, flow tests, ``roost show``, the Python API and the server; these
tests hold its rule and the readers that show it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import roost
from roost.events import FlowEvent, FlowRecord, MessageEvent, RunStartEvent
from roost.runstate import fold, run_answer
from roost.testing import flow_from_yaml
from tests.cli_process import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.markers import MarkerRule

FLOW = """\
roost: 1
name: answers
defaults: {{provider: mock{markers}}}
providers:
  mock: {{kind: scripted, replies: {replies}}}
agents:
  USER: {{role: A person.}}
  bot: {{role: A bot.{own}}}
start: {{from: USER, to: bot, content: Is 2 + 2 four?}}
"""


def _said(*contents: str) -> list[MessageEvent]:
    speakers = ("USER", "bot")
    return [
        MessageEvent(
            seq=seq, run="r", ts="t", from_=speakers[seq % 2], to=speakers[1 - seq % 2], content=c
        )
        for seq, c in enumerate(contents)
    ]


@pytest.mark.parametrize(
    ("contents", "rule", "answer"),
    [
        (("Is it?", "Yes: 4.", "TERMINATE"), "end", "Yes: 4."),  # the marker is not the answer
        (("Is it?", "Checked: it is 4. TERMINATE"), "end", "Checked: it is 4."),
        (("Is it?", "Checked: it is 4.\nTERMINATE  \n"), "end", "Checked: it is 4."),
        (("Is it?", "Let me ask. INTERRUPT"), "end", "Let me ask."),
        (("Is it?", "It is 4. TERMINATED"), "end", "It is 4. TERMINATED"),  # not the word
        (("Is it?", "It is 4. TERMINATE"), "whole", "It is 4. TERMINATE"),  # no marker here
        (("Is it?", "4", "  TERMINATE "), "whole", "4"),
        (("Is it?", "TERMINATE now: it is 4"), "anywhere", "TERMINATE now: it is 4"),
        (("Is it?", "It is 4 TERMINATE"), "anywhere", "It is 4"),
        (("TERMINATE",), "end", None),  # nothing said has text
        ((), "end", None),
    ],
)
def test_the_answer_is_the_latest_message_with_text_its_end_marker_taken_off(
    contents: tuple[str, ...], rule: MarkerRule, answer: str | None
) -> None:
    assert run_answer(_said(*contents), lambda node: rule) == answer


def test_each_node_s_markers_are_read_from_the_flow_in_force() -> None:
    text = FLOW.format(markers=", markers: whole", own="", replies="[]")
    own = FLOW.format(markers=", markers: whole", own=", markers: end", replies="[]")
    start = RunStartEvent(
        seq=0, run="r", ts="t", flow=FlowRecord(path="f", name="f", hash="h", text=text)
    )
    said = [e.model_copy(update={"seq": e.seq + 1}) for e in _said("Is it?", "It is 4. TERMINATE")]
    assert fold([start, *said]).answer == "It is 4. TERMINATE"  # whole: no marker in it
    switch = FlowEvent(
        seq=3, run="r", ts="t", flow=FlowRecord(path="f", name="f", hash="g", text=own)
    )
    assert fold([start, *said, switch]).answer == "It is 4."  # the bot's own rule: end


def test_the_python_api_s_state_answers_what_the_bot_said_not_the_person_s_terminate() -> None:
    flow = flow_from_yaml(FLOW.format(markers="", own="", replies='["Yes, it is 4.", TERMINATE]'))
    state = roost.run_sync(flow)
    assert (state.last_message.content, state.answer) == ("TERMINATE", "Yes, it is 4.")  # type: ignore[union-attr]


def test_roost_show_prints_the_run_s_answer(tmp_path: Path) -> None:
    replies = '["Checked: it is 4. TERMINATE"]'
    (tmp_path / "f.yaml").write_text(FLOW.format(markers="", own="", replies=replies))
    done = run_cli("run", "f.yaml", "--db", "runs.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[1]
    shown = run_cli("show", run_id, "--db", "runs.db", cwd=tmp_path)
    assert "answer: Checked: it is 4.\n" in shown.stdout


def test_a_flow_test_s_final_is_the_answer(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        FLOW.format(markers="", own="", replies='["Yes, it is 4.", TERMINATE]')
    )
    (tmp_path / "f.test.yaml").write_text(
        "flow: f.yaml\ncases:\n  - name: says four\n"
        "    expect: {status: terminated, final: {equals: 'Yes, it is 4.'}}\n"
    )
    done = run_cli("test", "f.test.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
