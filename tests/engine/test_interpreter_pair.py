"""Two agents talking: replies, keywords, the pair cap, interrupts and what each agent sees."""

from __future__ import annotations

import pytest

from roost.engine import Runner, fold
from roost.errors import RunStateError
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, messages, pair, runner_for


async def test_the_pair_cap_counts_both_directions_and_terminates() -> None:
    text = pair("[a]", extra=", max_rounds: 4")
    runner, log = runner_for(text.replace("[a]", "[a], when_exhausted: repeat_last"))
    state = await runner.start()
    assert state.status == "terminated"
    assert len(messages(log.load())) == 4  # the start message counts
    assert log.load()[-1].node == "USER"
    assert log.load()[-1].reason == "max_rounds"


async def test_terminate_keyword_is_trimmed() -> None:
    runner, log = runner_for(pair('["  TERMINATE\\n"]'))
    state = await runner.start()
    assert state.status == "terminated"
    assert log.load()[-1].type == "terminate"


async def test_interrupt_keyword_pauses_with_the_pair_reversed() -> None:
    runner, _log = runner_for(pair("[INTERRUPT, after, TERMINATE]"))
    state = await runner.start()
    assert state.status == "paused"
    assert state.pending is not None
    assert (state.pending.from_, state.pending.to) == ("USER", "assistant")
    assert state.history[-1].state == "interrupt"


async def test_an_always_agent_is_asked_and_feedback_goes_on() -> None:
    runner, log = runner_for(pair("[four, TERMINATE]", user="{interrupt: ALWAYS}"))
    state = await runner.start()
    assert state.status == "paused"
    assert messages(log.load()) == [("USER", "assistant", "Hi"), ("assistant", "USER", "four")]
    state = await runner.continue_("thanks")
    assert state.status == "terminated"
    events = log.load()
    assert [e.type for e in events if e.type in ("interrupt", "resume")] == ["interrupt", "resume"]
    assert messages(events)[2:] == [
        ("USER", "assistant", "thanks"),
        ("assistant", "USER", "TERMINATE"),
    ]
    resume = next(e for e in events if e.type == "resume")
    assert (resume.from_, resume.to, resume.feedback) == ("USER", "assistant", "thanks")


async def test_continue_without_feedback_lets_the_node_answer_itself() -> None:
    runner, log = runner_for(pair("[four, my own answer, TERMINATE]", user="{interrupt: ALWAYS}"))
    await runner.start()
    state = await runner.continue_("")
    assert messages(log.load())[2] == ("USER", "assistant", "my own answer")
    # USER answered through the provider; the assistant's TERMINATE then ends the run.
    assert messages(log.load())[3:] == [("assistant", "USER", "TERMINATE")]
    assert state.status == "terminated"


async def test_start_to_an_always_agent_pauses_at_once() -> None:
    flow = pair("[x]", user="{interrupt: ALWAYS}").replace(
        "from: USER, to: assistant", "from: assistant, to: USER"
    )
    runner, log = runner_for(flow)
    state = await runner.start()
    assert state.status == "paused"
    assert (state.pending.from_, state.pending.to) == ("USER", "assistant")  # type: ignore[union-attr]
    assert not [e for e in log.load() if e.type == "llm_call"]


async def test_the_pair_cap_is_checked_before_feedback_is_recorded() -> None:
    text = pair("[one]", extra=", max_rounds: 2", user="{interrupt: ALWAYS}")
    runner, log = runner_for(text)
    state = await runner.start()
    # Hi + one = 2 messages: the cap terminates right after the reply.
    assert state.status == "terminated"
    text = pair("[INTERRUPT]", extra=", max_rounds: 2")
    runner, log = runner_for(text)
    state = await runner.start()
    assert state.status == "terminated"  # the cap comes before the INTERRUPT keyword
    flow = make_flow(pair("[INTERRUPT, x]", extra=", max_rounds: 2"))
    log = MemoryLog("r")
    # Build a paused run whose pair already reached its cap, then continue it.
    paused = make_flow(pair("[INTERRUPT, x]", extra=", max_rounds: 5"))
    runner = Runner(flow=paused, log=log)
    await runner.start()
    state = await Runner(flow=flow, log=log).continue_("feedback that must not be recorded")
    assert state.status == "terminated"
    events = log.load()
    assert events[-2].type == "resume" and events[-1].type == "terminate"
    assert "feedback that must not be recorded" not in [m[2] for m in messages(events)]


async def test_continue_and_retry_refuse_a_run_in_the_wrong_state() -> None:
    runner, _ = runner_for(pair("[TERMINATE]"))
    with pytest.raises(RunStateError, match="not paused"):
        await runner.continue_("x")
    await runner.start()
    with pytest.raises(RunStateError, match="not paused"):
        await runner.continue_("x")
    with pytest.raises(RunStateError, match="terminated"):
        await runner.retry()
    with pytest.raises(RunStateError, match="already started"):
        await runner.start()


async def test_a_provider_error_stops_the_run_and_retry_goes_on() -> None:
    runner, log = runner_for(pair("[{error: boom}, fixed, TERMINATE]"))
    state = await runner.start()
    assert state.status == "error"
    error = log.load()[-1]
    assert error.type == "error"
    assert (error.from_, error.to) == ("assistant", "USER")
    assert "boom" in error.content
    llm = next(e for e in log.load() if e.type == "llm_call")
    assert llm.error and "boom" in llm.error
    state = await runner.retry()
    assert state.status == "terminated"
    assert [e.type for e in log.load()].count("retry") == 1
    assert messages(log.load())[1] == ("assistant", "USER", "fixed")
    assert fold(log.load()) == state


async def test_a_missing_template_variable_is_an_error_entry() -> None:
    text = pair("[x]").replace("{role: You help.}", '{role: "Hi {{ vars.nothing }}"}')
    runner, log = runner_for(text)
    state = await runner.start()
    assert state.status == "error"
    assert "undefined" in log.load()[-1].content


async def test_defaults_interrupt_always_pauses_after_every_reply() -> None:
    runner, log = runner_for(pair("[a, b, c]", extra=", interrupt: ALWAYS"))
    state = await runner.start()  # the assistant is a person too, so it is asked first
    assert (state.pending.from_, state.pending.to) == ("assistant", "USER")  # type: ignore[union-attr]
    state = await runner.continue_("")  # ...and lets its provider answer
    assert (state.pending.from_, state.pending.to) == ("USER", "assistant")  # type: ignore[union-attr]
    state = await runner.continue_("more")
    assert state.status == "paused"
    assert [m[2] for m in messages(log.load())] == ["Hi", "a", "more", "b"]
