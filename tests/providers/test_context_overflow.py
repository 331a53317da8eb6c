"""A model that refuses a request as too long: the history is compressed and asked again.

Each API's real refusal (OpenAI's ``context_length_exceeded``, Anthropic's
"prompt is too long" 400, the words of compatible servers) is sent by the fake
server to the real SDK; the run records the refused call, the summary and the
compaction, then the second try; only a second refusal stops it at an error.
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import TYPE_CHECKING

import pytest
from fakes.script import Reply, Status, too_long

from roost.engine import Runner
from roost.engine.compaction import context_sizes
from roost.engine.replay import replay_run
from roost.errors import CONTEXT_TOO_LONG
from roost.events import CompactEvent, ErrorEvent, Event, LlmCallEvent, MessageEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from roost.providers._errors import is_context_overflow
from roost.runstate import fold

from .conftest import API_KEY

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from roost.flow.models import Flow

APIS = {"openai": "chat", "openai-responses": "responses", "anthropic": "anthropic"}


def pair_flow(kind: str, server: FakeLLMServer, *, rounds: int = 6, extra: str = "") -> Flow:
    url = server.url if kind == "anthropic" else server.url + "/v1"
    text = f"""\
        roost: 1
        defaults: {{provider: llm, max_rounds: {rounds}{extra}}}
        providers:
          llm: {{kind: {kind}, model: fake-model, base_url: "{url}", api_key: {API_KEY},
                max_retries: 0, stream: false}}
          writer: {{kind: scripted, replies: ["never used"]}}
        agents:
          a: {{role: You are a.}}
          b: {{role: You are b.}}
        start: {{from: a, to: b, content: "Tell me about the sea, at length please."}}
        """
    return load_flow_text(textwrap.dedent(text), "flow.yaml")


def chat_replies(count: int) -> list[Reply]:
    return [Reply(text=f"reply {n}: " + "the sea is wide and deep. " * 8) for n in range(count)]


async def run(flow: Flow) -> list[Event]:
    log = MemoryLog("run")
    await Runner(flow=flow, log=log).start()
    return log.load()


@pytest.mark.parametrize("kind", list(APIS))
async def test_a_refused_request_is_summarised_and_tried_once_more(
    kind: str, server: FakeLLMServer
) -> None:
    server.script(
        *chat_replies(4),
        too_long(APIS[kind], 130_000, 128_000),  # b's third reply: refused
        Reply(text="SUMMARY: a and b talked about the sea."),  # the summary b's view gets
        Reply(text="b answers after all."),
    )
    events = await run(pair_flow(kind, server))
    tail = events[-6:]
    refused, summary, compact, answered, message = (
        tail[0],
        tail[1],
        tail[2],
        tail[3],
        tail[4],
    )
    assert isinstance(refused, LlmCallEvent) and refused.error is not None
    assert "longer than the model's context window" in refused.error
    assert refused.attempts[-1].outcome == CONTEXT_TOO_LONG
    assert refused.attempts[-1].status == 400
    assert isinstance(summary, LlmCallEvent) and summary.purpose == "summary"
    assert summary.node == "b"
    assert isinstance(compact, CompactEvent)
    assert (compact.node, compact.to, compact.stage) == ("b", "a", "summary")
    assert compact.summary == "SUMMARY: a and b talked about the sea."
    assert compact.tokens_after < compact.tokens_before
    assert isinstance(answered, LlmCallEvent) and answered.error is None
    assert answered.attempts[-1].outcome == "ok"
    assert isinstance(message, MessageEvent) and message.content == "b answers after all."
    assert not any(isinstance(e, ErrorEvent) for e in events)  # no error entry
    # What the model was sent the second time: the first message, the summary, the latest.
    retried = str(server.requests[-1].body)
    assert "SUMMARY: a and b talked about the sea." in retried
    assert "Tell me about the sea" in retried
    assert "reply 3" in retried and "reply 1" not in retried
    assert len(retried) < len(str(server.requests[-3].body))
    report = await replay_run(None, events)
    assert report.identical, report.difference


@pytest.mark.parametrize(("kind", "learnt"), [("openai", 4096), ("anthropic", 4096)])
async def test_the_limit_a_refusal_names_becomes_the_providers_window(
    kind: str, learnt: int, server: FakeLLMServer
) -> None:
    server.script(
        *chat_replies(4),
        too_long(APIS[kind], 5000, learnt),
        Reply(text="SUMMARY: the sea."),
        Reply(text="b answers after all."),
    )
    events = await run(pair_flow(kind, server))
    assert fold(events).windows == {"llm": learnt}
    sizes = context_sizes(pair_flow(kind, server), fold(events))
    assert sizes and {size.window for size in sizes} == {learnt}


@pytest.mark.parametrize("kind", list(APIS))
async def test_a_second_refusal_is_an_error_entry(kind: str, server: FakeLLMServer) -> None:
    server.script(
        *chat_replies(4),
        too_long(APIS[kind], 130_000, 128_000),
        Reply(text="SUMMARY"),
        too_long(APIS[kind], 129_000, 128_000),
    )
    events = await run(pair_flow(kind, server))
    calls = [e for e in events if isinstance(e, LlmCallEvent)]
    assert [c.error is not None for c in calls[-3:]] == [True, False, True]
    assert calls[-2].purpose == "summary"
    last = events[-1]
    assert isinstance(last, ErrorEvent) and (last.from_, last.to) == ("b", "a")
    assert "context window" in last.content
    assert [e.type for e in events[-5:]] == ["llm_call", "llm_call", "compact", "llm_call", "error"]
    report = await replay_run(None, events)
    assert report.identical, report.difference


async def test_a_summary_that_fails_falls_back_to_cut(server: FakeLLMServer) -> None:
    # The summary is the writer's job here, and the writer fails: the run goes on with a cut.
    flow = pair_flow("openai", server, extra=", summary_provider: writer")
    flow = load_flow_text(
        flow.text.replace('replies: ["never used"]', "replies: [{error: no summary today}]"),
        "flow.yaml",
    )
    server.script(*chat_replies(4), too_long("chat", 130_000, 128_000), Reply(text="b again"))
    events = await run(flow)
    summary = next(e for e in events if isinstance(e, LlmCallEvent) and e.purpose)
    assert summary.error is not None and summary.provider == "writer"
    compact = next(e for e in events if isinstance(e, CompactEvent))
    assert compact.stage == "cut" and compact.summary is None
    assert isinstance(events[-2], MessageEvent) and events[-2].content == "b again"
    retried = str(server.requests[-1].body)
    assert "earlier messages were left out" in retried and "reply 1" not in retried
    assert (await replay_run(None, events)).identical


@pytest.mark.parametrize(
    ("status", "body", "overflow"),
    [
        (400, {"error": {"code": "context_length_exceeded", "message": "x"}}, True),
        (400, {"error": {"type": "invalid_request_error", "message": "prompt is too long"}}, True),
        # vLLM and other OpenAI-compatible servers
        (400, {"message": "This model's maximum context length is 4096 tokens."}, True),
        # llama.cpp's server
        (400, {"error": {"type": "exceed_context_size_error", "message": "too big"}}, True),
        (413, {"error": {"message": "the input exceeds the model's context window"}}, True),
        # a rate limit counts tokens too: not the window
        (429, {"error": {"message": "Request too large: tokens per min exceed the limit"}}, False),
        (400, {"error": {"message": "temperature: must be at most 2"}}, False),
        (500, {"error": {"message": "maximum context length"}}, False),
    ],
)
def test_what_counts_as_a_request_too_long(status: int, body: dict, overflow: bool) -> None:
    inner = body.get("error", body)
    assert is_context_overflow(status, body, inner["message"]) is overflow


async def test_an_overflow_from_a_fallback_chain_is_one_too(server: FakeLLMServer) -> None:
    # The primary refuses as too long, the fallback fails otherwise: compressing may help.
    url = server.url + "/v1"
    text = f"""\
        roost: 1
        defaults: {{provider: llm, max_rounds: 6}}
        providers:
          llm: {{kind: openai, model: m, base_url: "{url}", api_key: k, max_retries: 0,
                fallback: [spare]}}
          spare: {{kind: openai, model: n, base_url: "{url}", api_key: k, max_retries: 0}}
        agents: {{a: {{}}, b: {{}}}}
        start: {{from: a, to: b, content: "Hello there, tell me everything."}}
        """
    flow = load_flow_text(textwrap.dedent(text), "flow.yaml")
    server.script(
        *chat_replies(4),
        too_long("chat", 130_000, 128_000),
        Status(500, "down", headers={}),
        Reply(text="SUMMARY"),
        Reply(text="done"),
    )
    events = await asyncio.wait_for(run(flow), 30)
    compact = next(e for e in events if isinstance(e, CompactEvent))
    assert compact.stage == "summary"
    assert isinstance(events[-2], MessageEvent) and events[-2].content == "done"
