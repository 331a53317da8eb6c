"""A run's answer: the latest message with text, a marker at its end taken off by its rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.events import FlowEvent, FlowRecord, MessageEvent, RunStartEvent
from roost.runstate import fold, run_answer
from tests.runstate.conftest import FLOW

if TYPE_CHECKING:
    from roost.flow.markers import MarkerRule


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
