"""Routes read by people: conditions in short, structured replies as fields."""

from __future__ import annotations

import pytest

from roost.cli.transcript import event_line
from roost.events import MessageEvent, RouteRecord, SelectEvent, TerminateEvent
from roost.flow.models import Route
from roost.flow.routes import data_text, holds, routes_taken, short_label

LABELS = [
    ({"field": "verdict", "equals": "revise"}, "verdict = revise"),
    ({"matches": "published"}, "matches /published/"),
    ({"contains": "ok"}, "contains “ok”"),
    ({"equals": "yes"}, "says “yes”"),
    ({"field": "n", "gt": 2}, "n > 2"),
    ({"field": "n", "lt": 0.5}, "n < 0.5"),
    ({"field": "v", "in": ["a", "b"]}, "v in {a, b}"),
    ({"field": "v", "matches": "^a"}, "v matches /^a/"),
    ({"python": "m:f"}, "python m:f"),
    (
        {"all": [{"contains": "a"}, {"any": [{"contains": "b"}, {"contains": "c"}]}]},
        "contains “a” and (contains “b” or contains “c”)",
    ),
    ({"not": {"field": "ok", "equals": True}}, "not ok = true"),
    (None, "always"),
]


@pytest.mark.parametrize(("when", "label"), LABELS)
def test_a_condition_in_short(when: object, label: str) -> None:
    route = Route.model_validate({"to": "x", "when": when})
    assert short_label(route.when) == label


def test_a_field_equals_tells_true_from_one() -> None:
    route = Route.model_validate({"to": "x", "when": {"field": "ok", "equals": True}})

    def never(*_: object) -> bool:
        raise AssertionError

    assert holds(route.when, "", {"ok": True}, never)
    assert not holds(route.when, "", {"ok": 1}, never)
    assert not holds(route.when, "", {"other": True}, never)
    assert not holds(route.when, "", None, never)


def test_structured_data_reads_as_fields() -> None:
    assert data_text({"verdict": "revise", "score": 2, "tags": ["a"]}) == (
        'verdict: revise · score: 2 · tags: ["a"]'
    )


def test_the_transcript_shows_fields_and_the_route_taken() -> None:
    common = {"seq": 3, "run": "r", "ts": "t"}
    message = MessageEvent(
        **common,
        **{"from": "critic"},
        to="team",
        content='{"verdict": "revise"}',
        data={"verdict": "revise"},
    )
    assert "critic[/] → team: verdict: revise" in (event_line(message) or "")
    held = RouteRecord(to="writer", when="verdict = revise", held=True)
    missed = RouteRecord(to="editor", when="verdict = approve", held=False)
    select = SelectEvent(
        **common,
        channel="team",
        candidates=("writer",),
        chosen="writer",
        by="only_candidate",
        routes=(held, missed),
    )
    assert "picks writer (only_candidate, route: verdict = revise)" in (event_line(select) or "")
    assert routes_taken((held, missed)) == "verdict = revise"
    end = TerminateEvent(
        **common,
        node="team",
        reason="route",
        routes=(RouteRecord(to="TERMINATE", when="matches /done/", held=True),),
    )
    assert "terminated at team (route: matches /done/)" in (event_line(end) or "")
