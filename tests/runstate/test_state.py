"""What a run's state holds: the status each event leaves it in, and what its nodes spent."""

from __future__ import annotations

import pytest

from roost.runstate import Spent, spent_from, status_after


@pytest.mark.parametrize(
    ("before", "event_type", "after"),
    [
        ("new", "run_start", "new"),  # a run that has only started is new
        ("new", "message", "running"),
        ("running", "interrupt", "paused"),
        ("paused", "resume", "running"),
        ("running", "error", "error"),
        ("error", "retry", "running"),
        ("running", "terminate", "terminated"),
        ("terminated", "llm_call", "terminated"),  # a model call after the end changes nothing
        ("paused", "flow", "paused"),
        ("running", "a_type_added_later", "running"),
    ],
)
def test_a_status_changes_only_on_the_events_that_say_so(
    before: str, event_type: str, after: str
) -> None:
    assert status_after(before, event_type) == after  # type: ignore[arg-type]


def test_what_a_sub_flow_spent_is_recorded_read_back_and_added_up() -> None:
    spent = Spent(model_calls=2, tokens=30, tool_calls=1, recorded_cost=0.5)
    record = spent.record()
    assert record == {"model_calls": 2, "tokens": 30, "cost": 0.5, "tool_calls": 1}
    assert spent_from(record) == spent
    assert Spent().record() == {}  # nothing spent records nothing
    total = Spent()
    total.add(spent)
    total.add(spent_from({"tokens": 5, "a_key_added_later": 9}))
    assert (total.model_calls, total.tokens, total.tool_calls, total.cost) == (2, 35, 1, 0.5)
