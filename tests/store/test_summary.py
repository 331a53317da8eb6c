"""What a batch of events changes in a run's cached row: its status, messages and tokens."""

from __future__ import annotations

from roost.events import InterruptEvent, LlmCallEvent, LlmUsage, TerminateEvent
from roost.store.checks import COLUMN_MAX
from roost.store.summary import Delta, summarize
from tests.store.conftest import message, run_events


def call(seq: int, prompt: int, completion: int) -> LlmCallEvent:
    usage = LlmUsage(prompt_tokens=prompt, completion_tokens=completion)
    return LlmCallEvent(
        seq=seq, run="r", ts="t", node="a", provider="p", model="m", request_digest="d", usage=usage
    )


def test_a_batch_moves_the_status_as_the_fold_does_and_counts_its_messages_and_tokens() -> None:
    assert summarize(run_events("r", 3)) == Delta("running", 2, 0)
    assert summarize([call(3, 100, 20), message(4, "r"), call(5, 7, 3)]) == Delta("running", 1, 130)
    paused = InterruptEvent.model_validate(
        {"seq": 6, "run": "r", "ts": "t", "from": "USER", "to": "a"}
    )
    assert summarize([call(5, 1, 1), paused]).status == "paused"
    assert summarize([TerminateEvent(seq=7, run="r", ts="t", node="a")]).status == "terminated"


def test_a_batch_that_changes_no_status_keeps_the_one_given() -> None:
    assert summarize([call(3, 1, 2)]) == Delta(None, 0, 3)
    assert summarize([call(3, 1, 2)], "paused") == Delta("paused", 0, 3)
    assert summarize([]) == Delta(None, 0, 0)


def test_usage_outside_the_column_is_counted_as_its_nearest_end_and_said_to_be_clamped() -> None:
    assert summarize([call(3, 10**20, 5)]) == Delta(None, 0, COLUMN_MAX, clamped=True)
    assert summarize([call(3, -50, 5)]) == Delta(None, 0, 5, clamped=True)
    assert summarize([call(3, COLUMN_MAX - 1, 0), call(4, 1, 1)]) == Delta(
        None, 0, COLUMN_MAX, clamped=True
    )
