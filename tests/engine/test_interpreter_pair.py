"""Two agents talking: replies, keywords, the pair cap, interrupts and what each agent sees."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner, fold
from roost.errors import RunStateError
from roost.messages import AssistantMessage, ModelRequest, ModelResponse
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, messages, runner_for

if TYPE_CHECKING:
    from pathlib import Path

    from roost.providers.base import TextCallback


def pair(replies: str, *, extra: str = "", user: str = "{role: A person.}") -> str:
    return f"""
roost: 1
name: pair
defaults: {{provider: mock{extra}}}
providers:
  mock: {{kind: scripted, replies: {replies}}}
agents:
  USER: {user}
  assistant: {{role: You help.}}
start: {{from: USER, to: assistant, content: Hi}}
"""


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


async def test_between_two_agents_each_sees_only_their_messages_with_roles() -> None:
    runner, log = runner_for(pair("[{echo: last}, second, {echo: system}, TERMINATE]"))
    await runner.start()
    said = [m[2] for m in messages(log.load())]
    assert said[1] == "Hi"  # the last message assistant was shown
    assert said[3] == "You help."


class Recording:
    """A provider that keeps what each request showed: (node, [(kind, content), ...])."""

    name = "rec"
    model = "rec-model"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.seen: list[tuple[str, list[tuple[str, str]]]] = []

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        shown = [(type(m).__name__, m.content) for m in request.messages]
        self.seen.append((request.node, shown))
        return ModelResponse(message=AssistantMessage(content=self.replies[len(self.seen) - 1]))


async def test_each_agent_is_shown_the_whole_exchange_both_ways_with_its_own_as_assistant() -> None:
    provider = Recording(["a1", "u1", "a2", "TERMINATE"])
    runner, _log = runner_for(pair("[unused]"), providers=lambda name: provider)
    await runner.start()
    you, me = "UserMessage", "AssistantMessage"
    assert provider.seen[2] == ("assistant", [(you, "Hi"), (me, "a1"), (you, "u1")])
    assert provider.seen[3] == ("USER", [(me, "Hi"), (you, "a1"), (me, "u1"), (you, "a2")])


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


async def test_roles_see_vars_name_members_and_now() -> None:
    text = pair("[{echo: system}, TERMINATE]").replace(
        "{role: You help.}",
        "{role: \"{{ vars.persona }} {{ name }} {{ members | join(',') }} {{ now[:4] }}\"}",
    )
    text = text.replace("name: pair", "name: pair\nvars: {persona: careful}")
    runner, log = runner_for(text)
    await runner.start()
    said = messages(log.load())[1][2]
    assert said.startswith("careful assistant assistant,USER 20")


async def test_timestamps_prefix_user_messages_with_their_recorded_time() -> None:
    runner, log = runner_for(pair("[{echo: last}, TERMINATE]", extra=", timestamps: true"))
    await runner.start()
    start = log.load()[1]
    assert messages(log.load())[1][2] == f"[{start.ts}] Hi"


async def test_context_files_are_read_again_at_every_reply(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("first version")
    text = pair("[{echo: last}, more, {echo: last}, TERMINATE]").replace(
        "{role: You help.}", "{role: You help., context: [notes/*.md]}"
    )
    flow = make_flow(text, tmp_path / "flow.yaml")
    log = MemoryLog("r")
    seen: list[str] = []

    def edit(event: object) -> None:
        if getattr(event, "type", "") == "message" and getattr(event, "from_", "") == "assistant":
            seen.append(event.content)  # type: ignore[attr-defined]
            (notes / "a.md").write_text("second version")

    await Runner(flow=flow, log=log, on_event=edit).start()
    assert "Hi" in seen[0] and "first version" in seen[0] and "notes/a.md" in seen[0]
    assert "second version" in seen[1] and "more" in seen[1]


async def test_defaults_interrupt_always_pauses_after_every_reply() -> None:
    runner, log = runner_for(pair("[a, b, c]", extra=", interrupt: ALWAYS"))
    state = await runner.start()  # the assistant is a person too, so it is asked first
    assert (state.pending.from_, state.pending.to) == ("assistant", "USER")  # type: ignore[union-attr]
    state = await runner.continue_("")  # ...and lets its provider answer
    assert (state.pending.from_, state.pending.to) == ("USER", "assistant")  # type: ignore[union-attr]
    state = await runner.continue_("more")
    assert state.status == "paused"
    assert [m[2] for m in messages(log.load())] == ["Hi", "a", "more", "b"]
