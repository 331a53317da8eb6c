"""An event is a frozen record: ``from`` on the wire, absent fields left out, unknown ones kept."""

from __future__ import annotations

import pydantic
import pytest

from roost.events import InterruptEvent, MessageEvent, event_json, parse_event

NEWER = (
    '{"seq":3,"run":"r","ts":"2024-05-01T10:00:00.000000Z","type":"message",'
    '"from":"USER","to":"bot","content":"hi","state":"success","mood":"glad"}'
)


def test_a_field_a_newer_roost_writes_is_kept_and_written_back() -> None:
    event = parse_event(NEWER)
    assert isinstance(event, MessageEvent)
    assert (event.from_, event.to, event.content) == ("USER", "bot", "hi")
    assert event.model_extra == {"mood": "glad"}
    assert event_json(event) == NEWER  # images, background and data: absent, not null


def test_an_event_once_made_is_not_changed() -> None:
    event = MessageEvent(seq=0, run="r", ts="t", from_="USER", to="bot", content="hi")
    with pytest.raises(pydantic.ValidationError):
        event.content = "bye"  # type: ignore[misc]


def test_an_interrupt_says_nothing_itself() -> None:
    asked = InterruptEvent(seq=1, run="r", ts="t", from_="bot", to="USER", reason="human")
    assert asked.content == ""
    assert '"from":"bot"' in event_json(asked) and "tool_call" not in event_json(asked)
