"""A channel's transitions entry holds plain names and routes; a field test names its operators."""

from __future__ import annotations

from roost.flow.models import FieldCondition, Route, plain_successors, routes_in, targets_of


def test_a_transitions_entry_splits_into_plain_names_and_routes() -> None:
    route = Route.model_validate({"to": "writer", "when": {"field": "verdict", "equals": "redo"}})
    entry = ["editor", route, "critic"]
    assert plain_successors(entry) == ("editor", "critic")
    assert routes_in(entry) == (route,)
    assert targets_of(entry) == ("editor", "writer", "critic")


def test_a_field_condition_names_the_operators_written_by_their_yaml_names() -> None:
    written = FieldCondition.model_validate({"field": "score", "gt": 0.5, "in": [1, 2]})
    assert written.operators() == ["in", "gt"]
    assert FieldCondition.model_validate({"field": "score"}).operators() == []
