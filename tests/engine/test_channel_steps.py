"""A channel's turns as the engine takes them: a director that fails, or cannot be asked,
is an error on the channel's route."""

from __future__ import annotations

from roost.engine import fold
from tests.engine.conftest import channel, runner_for, selects


async def test_a_failing_director_records_an_error_on_the_channel_route() -> None:
    text = channel(strategy="llm", director_extra=", provider: boss").replace(
        "boss: {kind: scripted, replies: []}", "boss: {kind: scripted, replies: [{error: down}, y]}"
    )
    runner, log = runner_for(text)
    state = await runner.start()
    assert state.status == "error"
    error = log.load()[-1]
    assert (error.from_, error.to) == ("team", "USER")
    state = await runner.retry()
    assert selects(log)[0] == ("y", "llm")
    assert fold(log.load()) == state


async def test_a_director_failing_after_a_member_spoke_records_the_error_toward_that_member() -> (
    None
):
    text = channel(strategy="llm", director_extra=", provider: boss").replace(
        "boss: {kind: scripted, replies: []}", "boss: {kind: scripted, replies: [y, {error: down}]}"
    )
    runner, log = runner_for(text)
    state = await runner.start()
    assert state.status == "error"
    error = log.load()[-1]
    assert (error.type, error.from_, error.to) == ("error", "team", "y")
    assert error.content.endswith("down")


async def test_a_director_prompt_that_fails_to_render_is_an_error_on_the_channel_route() -> None:
    text = channel(strategy="llm", director_extra=', provider: boss, prompt: "{{ nope.x }}"')
    runner, log = runner_for(text)
    state = await runner.start()
    assert state.status == "error"
    error = log.load()[-1]
    assert (error.from_, error.to) == ("team", "USER") and "nope" in error.content
    assert not [e for e in log.load() if e.type == "llm_call"]
