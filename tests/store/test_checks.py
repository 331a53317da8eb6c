"""What every log backend checks: each event in its place, seqs and counts that fit the columns."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from roost.events import Event
from roost.store.checks import (
    COLUMN_MAX,
    clamped_count,
    first_difference,
    invalid_event_text,
    order_problem,
    seq_problem,
)
from tests.store.conftest import message, run_events, start_event


def test_an_event_comes_next_only_at_its_seq_in_its_own_run_and_never_a_second_start() -> None:
    assert order_problem(message(3, "r"), 3, "r") is None
    assert order_problem(message(3, "r"), 3, None) is None  # a log not yet named takes any run
    assert order_problem(message(4, "r"), 3, "r") == "event seq 4 where 3 was expected"
    assert order_problem(message(3, "s"), 3, "r") == "event of run 's' in the log of run 'r'"
    late_start = start_event("r").model_copy(update={"seq": 3})
    assert order_problem(late_start, 3, "r") == "a second run_start at seq 3: a log holds one run"


def test_a_seq_outside_the_column_is_named_and_a_count_is_brought_into_it() -> None:
    assert seq_problem([0, 1, COLUMN_MAX - 1]) is None
    assert seq_problem([0, -1]) == (
        f"event seq -1 is outside what the store holds (0 to {COLUMN_MAX - 1})"
    )
    assert seq_problem([COLUMN_MAX]) is not None
    assert [clamped_count(n) for n in (-5, 0, 7, COLUMN_MAX, 10**20)] == [
        0,
        0,
        7,
        COLUMN_MAX,
        COLUMN_MAX,
    ]


def test_two_copies_of_a_run_part_where_an_event_differs_or_the_shorter_ends() -> None:
    events = run_events("r", 4)
    assert first_difference(events, list(events)) is None
    edited = [*events[:2], message(2, "r", "edited"), events[3]]
    assert first_difference(events, edited) == 2
    assert first_difference(events, events[:3]) == 3
    assert first_difference(events[:1], events) == 1


@pytest.mark.parametrize(
    ("payload", "line"),
    [
        ({"type": "nope", "seq": 1, "run": "r", "ts": "t"}, "event type 'nope' is unknown"),
        (
            {"type": "message", "seq": "x", "run": "r", "ts": "t", "from": "a", "to": "b"},
            "invalid event: message.seq: Input should be a valid integer",
        ),
    ],
)
def test_an_event_pydantic_refuses_is_described_in_one_line(
    payload: dict[str, object], line: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(Event).validate_python(payload)
    assert invalid_event_text(caught.value).startswith(line)
