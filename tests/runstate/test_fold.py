"""The run state is a pure function of the events (section 7)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings

from roost.engine import RunState, fold
from roost.events import event_json, parse_event
from roost.runstate import apply
from tests.fakes.random_runs import drive, scenarios


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_fold_at_every_batch_equals_the_live_state(s: dict[str, Any]) -> None:
    events, snapshots = asyncio.run(drive(s))
    assert [e.seq for e in events] == list(range(len(events)))
    for snapshot in snapshots:
        assert fold(events[: snapshot.next_seq]) == snapshot
    # every prefix folds, and folding through JSON gives the same state
    for end in range(len(events) + 1):
        fold(events[:end])
    reparsed = [parse_event(event_json(e)) for e in events]
    assert fold(reparsed) == fold(events)


def test_apply_is_incremental() -> None:
    events, _ = asyncio.run(
        drive(
            {
                "replies": ["hi", "TERMINATE"],
                "kind": "pair",
                "strategy": "round_robin",
                "always": False,
                "answers": [],
                "max_rounds": 5,
            }
        )
    )
    state = RunState()
    for event in events:
        apply(state, event)
    assert state == fold(events)
    assert state.status == "terminated"
    assert state.next_seq == len(events)
    assert [h.from_ for h in state.history] == ["USER", "bot", "USER"]


def test_an_empty_log_is_a_new_run() -> None:
    state = fold([])
    assert state.status == "new" and state.history == [] and state.next_seq == 0
    assert state.pending is None and state.provider_attempts == {}
