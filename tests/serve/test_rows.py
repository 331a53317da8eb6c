"""How the API words a run: what a paused run waits for."""

from __future__ import annotations

from roost.runstate import RunState
from roost.serve.rows import waiting_for
from tests.serve.conftest import paused


def test_what_a_paused_run_waits_for_names_the_kind_of_pause() -> None:
    state = RunState(status="paused", pending=paused(None))
    assert waiting_for(None, state) == {
        "node": "USER",
        "answering": "a",
        "reason": "human",
        "tool_call": None,
        "tool_calls": None,
        "choices": [],
        "budget": None,
    }
    state.pending = paused("tool_approval")
    assert (waiting_for(None, state) or {})["reason"] == "tool_approval"
    state.status = "terminated"
    assert waiting_for(None, state) is None
