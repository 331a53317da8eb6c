"""A person's answers in a channel: a manual director's choice, refused when it names
no one who may speak."""

from __future__ import annotations

import pytest

from roost.errors import RunStateError
from tests.engine.conftest import channel, messages, runner_for, selects


async def test_manual_director_pauses_and_a_non_member_answer_is_an_error() -> None:
    runner, log = runner_for(channel(strategy="manual", max_rounds=2))
    state = await runner.start()
    assert state.status == "paused"
    assert state.pending.reason == "manual_select"  # type: ignore[union-attr]
    before = len(log.load())
    with pytest.raises(RunStateError, match="not a member"):
        await runner.continue_("nobody")
    assert runner.state.status == "paused" and len(log.load()) == before
    state = await runner.continue_("@z")
    assert selects(log)[0] == ("z", "manual")
    assert messages(log.load())[1][0] == "z"


async def test_a_manual_answer_naming_a_member_who_may_not_speak_is_refused() -> None:
    runner, log = runner_for(channel(strategy="manual", start_from="x", max_rounds=3))
    state = await runner.start()
    assert state.status == "paused"
    with pytest.raises(RunStateError, match="may not speak next"):
        await runner.continue_("x")  # x spoke last
    with pytest.raises(RunStateError, match="name of the next speaker"):
        await runner.continue_("")
    assert runner.state.status == "paused"
    await runner.continue_("y")
    assert selects(log)[0] == ("y", "manual")
