"""Which nodes an event names: what a flow taking over a run must keep, and what is drawn."""

from __future__ import annotations

from typing import Any

import pytest

from roost.events import Event, event_adapter, nodes_named


def event(type_: str, **fields: Any) -> Event:
    data = {"seq": 1, "run": "r", "ts": "", "type": type_, **fields}
    return event_adapter().validate_python(data)


@pytest.mark.parametrize(
    ("made", "named"),
    [
        (event("message", **{"from": "USER", "to": "bot"}, content="hi"), ("USER", "bot")),
        (event("retry", **{"from": "bot", "to": "USER"}), ("bot", "USER")),
        (event("select", channel="room", candidates=["a", "b", "c"], chosen="b", by="llm"),
         ("room", "b")),
        (event("tool_result", agent="bot", id="1", name="add", content="3"), ("bot",)),
        (event("terminate", node="bot"), ("bot",)),
    ],
)  # fmt: skip
def test_an_event_names_its_ends_its_choice_or_its_node(
    made: Event, named: tuple[str, ...]
) -> None:
    assert nodes_named(made) == named
