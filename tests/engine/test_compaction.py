"""Compressing a node's view in stages (trim, summary, cut) to fit its model's window.

A scripted provider that sets ``context_window`` is a model with that window:
requests are estimated at four characters a token until a provider reports
usage. A recording wrapper keeps what each call was sent, so the tests see
what a model sees; the log itself always keeps the whole history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from fakes.runners import runner_options

from roost.context_window import CUT_NOTE, SUMMARY_HEAD
from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.errors import RunStateError
from roost.events import CompactEvent, Event, LlmCallEvent, MessageEvent
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from roost.nodes.agent import seen_by
from roost.ports import MemoryLog
from roost.runstate import RunState, apply, fold
from tests.engine.conftest import LONG, make_flow
from tests.fakes.recording import Recording
from tests.fakes.tools import FakeTool, tools_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.flow.models import Flow


def pair(
    window: int, *, replies: str, extra: str = "", writer: str = '["They spoke of the sea."]'
) -> Flow:
    return make_flow(
        f"""
        roost: 1
        defaults: {{provider: chat, max_rounds: 24, summary_provider: writer{extra}}}
        providers:
          chat: {{kind: scripted, context_window: {window}, when_exhausted: cycle,
                 replies: {replies}}}
          writer: {{kind: scripted, when_exhausted: cycle, replies: {writer}}}
        agents:
          a: {{role: You are a.}}
          b: {{role: You are b.}}
        start: {{from: a, to: b, content: "Tell me about the sea."}}
        """
    )


async def run(flow: Flow, recording: Recording | None = None, **options: Any) -> list[Event]:
    log = MemoryLog("run-1")
    options = runner_options({"providers": recording or Recording(flow), **options})
    await Runner(flow=flow, log=log, **options).start()
    return log.load()


def compacts(events: Sequence[Event]) -> list[CompactEvent]:
    return [e for e in events if isinstance(e, CompactEvent)]


def texts(request: ModelRequest) -> list[str]:
    return [m.content for m in request.messages]


REPLIES = f'["{LONG * 2}b", "{LONG * 2}a"]'


async def test_a_long_pair_chat_is_summarised_and_each_request_fits() -> None:
    flow = pair(400, replies=REPLIES)
    recording = Recording(flow)
    events = await run(flow, recording)
    assert events[-1].type == "terminate"  # every turn answered
    found = compacts(events)
    assert found and {c.stage for c in found} == {"summary"}
    assert {(c.node, c.to) for c in found} == {("a", "b"), ("b", "a")}
    for compact in found:
        assert compact.summary == "They spoke of the sea."
        assert compact.tokens_after < 0.7 * 400 < compact.tokens_before
        before = events[compact.seq - 1]  # its summary's llm_call, just before it
        assert isinstance(before, LlmCallEvent) and before.purpose == "summary"
        assert before.provider == "writer" and before.node == compact.node
    chats = [request for name, request in recording.sent if name == "chat"]
    # Every request the chat model got fits under the line: about 4 characters a token.
    for request in chats:
        size = len(request.system) + sum(len(m.content) + 9 for m in request.messages)
        assert size / 4 <= 0.7 * 400
    last = chats[-1]
    assert last.system == "You are a." or last.system == "You are b."  # the system prompt stays
    shown = texts(last)
    assert shown[0] == "Tell me about the sea." or shown[0].startswith(LONG)  # the first entry
    assert any(text.startswith(SUMMARY_HEAD) for text in shown)
    # The log keeps the whole history: compaction changes the views, never the events.
    assert len([e for e in events if isinstance(e, MessageEvent)]) == 24
    # A replay compresses the same way from the recorded summaries: no model is called.
    assert (await replay_run(None, events)).identical


async def test_the_summary_is_asked_of_the_older_entries_with_the_summary_before() -> None:
    flow = pair(400, replies=REPLIES)
    recording = Recording(flow)
    events = await run(flow, recording)
    prompts = [r.messages[0].content for name, r in recording.sent if name == "writer"]
    assert len(prompts) >= 2
    assert "Write at most 75 words" in prompts[0]
    assert "@a: Tell me about the sea." not in prompts[0]  # the first entry stays shown
    assert LONG.strip() in prompts[0]
    # A later summary of the same view starts from the summary before it.
    first = compacts(events)[0]
    later = next(
        r.messages[0].content
        for name, r in recording.sent[
            recording.sent.index(("writer", _writer_request(recording, 0))) + 1 :
        ]
        if name == "writer" and "They spoke of the sea." in r.messages[0].content
    )
    assert "The summary of what came before:\nThey spoke of the sea." in later
    assert first.stage == "summary"


def _writer_request(recording: Recording, index: int) -> ModelRequest:
    return [r for name, r in recording.sent if name == "writer"][index]


async def test_a_flow_replaces_the_summary_prompt() -> None:
    prompt = (
        '"Sum up for {{ name }} in {{ words }} words: '
        '{% for m in messages %}{{ m.from }};{% endfor %}"'
    )
    flow = pair(400, replies=REPLIES, extra=f", summary_prompt: {prompt}")
    recording = Recording(flow)
    events = await run(flow, recording)
    first = compacts(events)[0]
    asked = _writer_request(recording, 0).messages[0].content
    # The first entry (a's opening) stays shown, so the summary starts with b's answer.
    assert asked.startswith(f"Sum up for {first.node} in 75 words: b;a;b;")


async def test_a_summary_still_too_long_is_cut_above_the_hard_line() -> None:
    flow = pair(400, replies=REPLIES, writer=f'["{LONG * 18}"]')
    recording = Recording(flow)
    events = await run(flow, recording)
    stages = [c.stage for c in compacts(events)]
    # The summary is longer than the turns it would replace: it is not used (its call is
    # recorded), and the older turns are cut instead.
    assert stages[0] == "cut", stages
    assert any(isinstance(e, LlmCallEvent) and e.purpose == "summary" for e in events)
    cut = compacts(events)[0]
    assert cut.summary is None and cut.tokens_after < cut.tokens_before
    # After the cut: the first entry, a note of what was left out, the latest entries.
    request = next(r for name, r in recording.sent if name == "chat" and _after(r, cut))
    shown = texts(request)
    assert shown[0] == "Tell me about the sea." or shown[0].startswith(LONG)
    assert shown[1].endswith("earlier messages were left out to fit the context window.]")
    assert not any(SUMMARY_HEAD in text for text in shown)


def _after(request: ModelRequest, cut: CompactEvent) -> bool:
    return any("left out to fit" in m.content for m in request.messages)


async def test_a_failed_summary_falls_back_to_cut_and_the_run_goes_on() -> None:
    flow = pair(400, replies=REPLIES, writer="[{error: the writer is away}]")
    events = await run(flow)
    assert events[-1].type == "terminate"
    failed = [e for e in events if isinstance(e, LlmCallEvent) and e.purpose and e.error]
    assert failed and all(e.error and "the writer is away" in e.error for e in failed)
    assert all(c.stage == "cut" for c in compacts(events))
    assert not any(e.type == "error" for e in events)  # never an error entry: a cut instead
    assert (await replay_run(None, events)).identical


async def test_the_latest_message_and_the_system_prompt_are_never_left_out() -> None:
    # The latest message alone is bigger than the window: everything else goes, not it.
    huge = LONG * 30
    flow = pair(400, replies=f'["{LONG}", "{huge}", "{LONG}"]', extra=", max_rounds: 5")
    recording = Recording(flow)
    events = await run(flow, recording)
    assert events[-1].type == "terminate"
    after_huge = [r for name, r in recording.sent if name == "chat" and huge in texts(r)[-1:]]
    assert after_huge and all(r.system for r in after_huge)
    # A cut that would leave only the huge message would not shrink the request: not made.
    assert compacts(events) and all(c.tokens_after < c.tokens_before for c in compacts(events))


async def test_trim_cuts_earlier_tool_results_to_a_note_and_keeps_the_latest_round() -> None:
    big = "x" * 3000
    flow = make_flow(
        """
        roost: 1
        defaults: {provider: chat}
        providers:
          chat: {kind: scripted, context_window: 1500, replies: [
            {tool_calls: [{name: fetch, id: c1}]},
            {tool_calls: [{name: fetch, id: c2}]},
            {tool_calls: [{name: fetch, id: c3}]},
            done]}
        agents:
          USER: {role: A person., interrupt: ALWAYS}
          assistant: {role: You help., functions: [fetch]}
        start: {from: USER, to: assistant, content: Go}
        """
    )
    recording = Recording(flow)
    events = await run(flow, recording, tools=tools_of(FakeTool("fetch", big)))
    trims = [c for c in compacts(events) if c.stage == "trim"]
    assert trims and all((c.node, c.to) == ("assistant", "USER") for c in trims)
    last = recording.sent[-1][1]
    results = [m for m in last.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["c1", "c2", "c3"]  # no call loses its result
    assert "trimmed to fit the context window" in results[0].content
    assert len(results[0].content) < 400
    assert results[-1].content.startswith("x" * 100) and len(results[-1].content) > 3000
    calls = [m for m in last.messages if isinstance(m, AssistantMessage)]
    assert [c.tool_calls[0].id for c in calls] == ["c1", "c2", "c3"]
    assert isinstance(last.messages[0], UserMessage) and last.messages[0].content == "Go"
    assert (await replay_run(flow, events, live_tools=tools_of(FakeTool("fetch", big)))).identical


async def test_a_scripted_provider_without_a_window_never_compresses() -> None:
    flow = make_flow(
        f"""
        roost: 1
        defaults: {{provider: chat, max_rounds: 40}}
        providers:
          chat: {{kind: scripted, when_exhausted: cycle, replies: ["{LONG * 40}"]}}
        agents: {{a: {{}}, b: {{}}}}
        start: {{from: a, to: b, content: Hi}}
        """
    )
    events = await run(flow)
    assert not compacts(events) and events[-1].type == "terminate"


async def test_a_channel_members_transcript_is_summarised() -> None:
    flow = make_flow(
        f"""
        roost: 1
        defaults: {{provider: chat, max_rounds: 30}}
        providers:
          chat: {{kind: scripted, context_window: 500, when_exhausted: cycle,
                 replies: ["{LONG}", "{LONG * 2}", "A summary of the talk."]}}
        agents: {{a: {{}}, b: {{}}}}
        channels:
          room: {{members: [a, b], max_rounds: 24, director: {{strategy: round_robin}}}}
        start: {{from: a, to: room, content: "Let us talk about the sea."}}
        """
    )
    recording = Recording(flow)
    events = await run(flow, recording)
    found = compacts(events)
    assert found and all(c.to == "room" for c in found)
    transcript = recording.sent[-1][1].messages[0].content
    lines = transcript.splitlines()
    assert lines[1] == "@a: Let us talk about the sea."  # the first line stays
    assert lines[2] in (SUMMARY_HEAD, CUT_NOTE.format(count=0)[:0] + lines[2])
    assert SUMMARY_HEAD in transcript or "left out" in transcript
    assert (await replay_run(None, events)).identical


async def test_every_prefix_folds_to_the_view_the_live_run_showed() -> None:
    """A run continued from any point (in another process) shows what the live run showed."""
    flow = pair(400, replies=REPLIES, writer=f'["S", "{LONG * 14}", {{error: away}}]')
    recording = Recording(flow)
    events = await run(flow, recording)
    assert {c.stage for c in compacts(events)} >= {"summary", "cut"}
    chats = iter(r for name, r in recording.sent if name == "chat")
    checked = 0
    for event in events:
        if not (isinstance(event, LlmCallEvent) and event.provider == "chat"):
            continue
        state = fold(events[: event.seq])  # what another process folds from the log so far
        to = state.step[1] if state.step else ""
        assert texts(next(chats)) == [
            m.content for m in seen_by(flow, state, event.node, to).messages
        ]
        checked += 1
    assert checked == 24 - 1
    # And the fold of every prefix agrees with the views built event by event.
    step = RunState()
    for n, event in enumerate(events, 1):
        apply(step, event)
        assert fold(events[:n]).views == step.views


async def test_a_providers_reported_usage_calibrates_its_characters_per_token() -> None:
    def two_chars_a_token(request: ModelRequest) -> Usage:
        size = len(request.system) + sum(len(m.content) + 9 for m in request.messages)
        return Usage(prompt_tokens=size // 2, completion_tokens=5)

    flow = pair(100_000, replies=REPLIES)
    events = await run(flow, Recording(flow, usage=two_chars_a_token))
    state = fold(events)
    assert state.chars_per_token("chat") == pytest.approx(2.0, rel=0.05)
    assert state.chars_per_token("writer") == 4.0  # it reported nothing: the default
    # Each view's latest reported size anchors its next estimate.
    base = state.views[("a", "b")]
    assert base.reported and base.anchor_tokens > 0


PERSON = """
roost: 1
defaults: {provider: chat, summary_provider: writer}
providers:
  chat: {kind: scripted, when_exhausted: cycle, replies: ["Noted, and the tide is out now."]}
  writer: {kind: scripted, when_exhausted: cycle, replies: ["They spoke of the tide."]}
agents:
  USER: {interrupt: ALWAYS}
  bot: {role: You help.}
start: {from: USER, to: bot, content: "Hello."}
"""


async def test_compact_now_compresses_a_paused_runs_views_and_replays_without_a_model() -> None:
    flow = make_flow(PERSON)
    log = MemoryLog("run-1")
    recording = Recording(flow)
    runner = Runner(flow=flow, log=log, sources=Sources(providers=recording))
    await runner.start()
    for said in ("More, please.", "And then?", "Go on."):
        await runner.continue_(said)
    state = await runner.compact()
    assert state.status == "paused"  # compressing is not a step: the run still waits
    made = compacts(log.load())
    assert [(c.node, c.to, c.stage) for c in made] == [("bot", "USER", "summary")]
    assert made[0].summary == "They spoke of the tide."
    await runner.continue_("Thanks.")
    shown = texts(recording.sent[-1][1])
    assert shown[0] == "Hello." and shown[1].startswith(SUMMARY_HEAD)
    assert shown[-1] == "Thanks." and "More, please." not in shown
    events = log.load()
    assert (await replay_run(None, events)).identical


async def test_compact_now_is_refused_for_a_run_that_cannot_go_on() -> None:
    flow = pair(100_000, replies=REPLIES)
    log = MemoryLog("run-1")
    runner = Runner(flow=flow, log=log, sources=Sources(providers=Recording(flow)))
    await runner.start()
    with pytest.raises(RunStateError, match="terminated: only a paused run"):
        await runner.compact()
    assert not compacts(log.load())


async def test_a_summary_is_not_streamed_as_the_nodes_words() -> None:
    flow = pair(400, replies=REPLIES)
    streamed: list[tuple[str, str]] = []
    events = await run(flow, on_text=lambda node, text: streamed.append((node, text)))
    assert compacts(events) and streamed
    assert not any("They spoke of the sea." in text for _, text in streamed)


async def test_a_summary_covers_the_entries_it_replaces_and_never_the_latest() -> None:
    """The summary is written of exactly the entries after the first, up to the one its
    ``compact`` event goes through; the next request shows the first entry, the summary,
    then every entry after that one, the message being answered last."""
    replies = ", ".join(f'"{LONG * 2}reply {n}"' for n in range(1, 9))
    flow = pair(400, replies=f"[{replies}]")
    recording = Recording(flow)
    events = await run(flow, recording)
    first = next(c for c in compacts(events) if c.stage == "summary")
    messages = [e for e in events if isinstance(e, MessageEvent) and e.seq < first.seq]
    covered = [m for m in messages[1:] if m.seq <= first.through]
    kept = [m for m in messages if m.seq > first.through]
    assert covered and kept  # some entries replaced, the latest one (at least) not
    prompt = _writer_request(recording, 0).messages[0].content
    said = [line for line in prompt.splitlines() if line.startswith("@")]
    assert said == [f"@{m.from_}: {m.content}" for m in covered]
    request = next(r for name, r in recording.sent if name == "chat" and _summarised(r))
    shown = texts(request)
    assert shown[0] == messages[0].content
    assert shown[1] == f"{SUMMARY_HEAD}\nThey spoke of the sea."
    assert shown[2:] == [m.content for m in kept]


def _summarised(request: ModelRequest) -> bool:
    return any(m.content.startswith(SUMMARY_HEAD) for m in request.messages)


async def test_a_failed_summary_is_followed_by_a_cut_even_under_the_hard_line() -> None:
    """The request is over compress_at: if the summary cannot be written, the older entries
    are cut at once, though the request is still under compress_hard_at."""
    away = "[{error: the writer is away}]"
    flow = pair(400, replies=REPLIES, writer=away, extra=", compress_hard_at: 1.0")
    events = await run(flow)
    failed = [i for i, e in enumerate(events) if isinstance(e, LlmCallEvent) and e.purpose]
    assert failed
    for index in failed:
        following = next(e for e in events[index + 1 :] if not isinstance(e, MessageEvent))
        assert isinstance(following, CompactEvent) and following.stage == "cut"
    assert events[-1].type == "terminate"
