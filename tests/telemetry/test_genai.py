"""The GenAI attributes of a model call's span: provider, models, tokens, how a call failed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply

from roost.events import LlmAttempt, LlmCallEvent
from roost.flow import load_flow_text
from roost.telemetry.spans import spans_of
from roost.testing import call, fail, flow_from_yaml
from tests.telemetry.conftest import FALLBACK_FLOW, as_fallback_calls, by_name, traced_run

if TYPE_CHECKING:
    from pathlib import Path


def test_a_model_call_carries_the_genai_attributes(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.script(Reply("Hello!", usage=FakeUsage(prompt=12, completion=7, cached=3)))
        server.script(Reply("TERMINATE", usage=FakeUsage(prompt=20, completion=1)))
        flow = load_flow_text(
            f"""
roost: 1
name: greet
providers:
  gpt: {{kind: openai, model: gpt-test, base_url: "{server.url}/v1", api_key: sk-test}}
  person: {{kind: scripted, replies: [TERMINATE]}}
agents:
  USER: {{role: A person., provider: person}}
  bot: {{role: You greet., provider: gpt}}
start: {{from: USER, to: bot, content: Hi}}
""",
            str(tmp_path / "greet.yaml"),
        )
        spans, _ = traced_run(flow)
    (chat,) = by_name(spans)["chat gpt-test"]
    attributes = dict(chat.attributes)
    assert chat.kind.name == "CLIENT"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == attributes["gen_ai.system"] == "openai"
    assert attributes["gen_ai.request.model"] == "gpt-test"
    assert attributes["gen_ai.response.model"] == "gpt-test"
    assert attributes["gen_ai.usage.input_tokens"] == 12
    assert attributes["gen_ai.usage.output_tokens"] == 7
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 3
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["roost.provider"] == "gpt" and attributes["roost.node"] == "bot"
    (reply,) = by_name(spans)["invoke_agent bot"]
    assert reply.attributes["gen_ai.agent.name"] == "bot"
    assert reply.attributes["gen_ai.usage.input_tokens"] == 12
    (person,) = by_name(spans)["chat scripted"]
    assert person.attributes["gen_ai.provider.name"] == "scripted"


def test_after_a_fallback_the_provider_that_answered_is_reported_and_tokens_add_up() -> None:
    flow = flow_from_yaml(
        FALLBACK_FLOW,
        replies=[call("mean", data=[2, 4, 9]), "The mean is 5.", "TERMINATE"],
        environ={"MODEL": "gpt-test"},
    )
    _, events = traced_run(flow)
    spans = spans_of(as_fallback_calls(events))
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 3
    for chat in chats:
        assert chat.attributes["gen_ai.provider.name"] == "openai"  # gpt answered, not claude
        assert chat.attributes["gen_ai.request.model"] == "claude-test"
        assert chat.attributes["roost.provider"] == "claude"
        assert chat.attributes["roost.attempts"] == 2
    # The helper's reply made two calls (the tool round, then the answer): its totals are
    # the sum of both, not the last call's.
    [reply] = [s for s in spans if s.name == "invoke_agent helper"]
    assert reply.attributes["gen_ai.usage.input_tokens"] == 100 + 200
    assert reply.attributes["gen_ai.usage.output_tokens"] == 1 + 2
    assert reply.attributes["gen_ai.provider.name"] == "openai"


def test_a_model_written_as_a_placeholder_is_reported_as_the_model_that_answered() -> None:
    flow = flow_from_yaml(
        FALLBACK_FLOW, replies=["No tools needed.", "TERMINATE"], environ={"MODEL": "gpt-test"}
    )
    _, events = traced_run(flow)
    direct = [
        e.model_copy(update={"provider": "gpt", "model": "gpt-test"})
        if isinstance(e, LlmCallEvent)
        else e
        for e in events
    ]  # answered by gpt at once: no attempts recorded
    chats = [s for s in spans_of(direct) if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert chats and all(c.attributes["gen_ai.request.model"] == "gpt-test" for c in chats)
    assert all(c.name == "chat gpt-test" for c in chats)


def test_a_failed_call_is_typed_by_how_its_last_attempt_failed() -> None:
    flow = flow_from_yaml(
        FALLBACK_FLOW, replies=[fail("the server is busy")], environ={"MODEL": "gpt-test"}
    )
    _, events = traced_run(flow)
    attempts = (
        LlmAttempt(provider="claude", model="claude-test", outcome="http 529", status=529),
        LlmAttempt(provider="gpt", model="gpt-test", outcome="connection error"),
    )
    failed = [
        e.model_copy(update={"provider": "claude", "attempts": attempts})
        if isinstance(e, LlmCallEvent)
        else e
        for e in events
    ]
    [chat] = [s for s in spans_of(failed) if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert chat.error is not None
    assert chat.attributes["error.type"] == "connection error"
