"""A run's events as OpenTelemetry spans: the tree, the GenAI attributes, contents, ids.

Spans are read back through the OpenTelemetry SDK's in-memory exporter, as a
tracing backend would get them.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import roost
from roost.events import LlmAttempt, LlmCallEvent, LlmUsage, RetryEvent, ToolCallEvent
from roost.flow import load_flow_text
from roost.telemetry import tracing_configured
from roost.telemetry.otel import Tracing, default_resource, readable_span
from roost.telemetry.spans import spans_of
from roost.testing import call, fail, flow_from_yaml

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from opentelemetry.sdk.trace import ReadableSpan

TOOL_FLOW = """
roost: 1
name: approve
tools:
  mean: {python: "statistics:fmean", description: The mean of some numbers., approval: always}
agents:
  USER: {role: A person with numbers.}
  helper: {role: You answer with your tools., functions: [mean]}
start: {from: USER, to: helper, content: "What is the mean of 2, 4 and 9?"}
"""
TOOL_REPLIES = [
    {
        "tool_calls": [
            {"name": "mean", "arguments": {"data": [2, 4, 9]}},
            {"name": "mean", "arguments": {"data": [1]}},
        ]
    },
    "The mean is 5.",
    "TERMINATE",
]


def traced_run(
    flow: roost.Flow,
    answers: Sequence[str] = (),
    *,
    content: bool = False,
    message: str | None = None,
) -> tuple[list[ReadableSpan], list[roost.Event]]:
    """Runs ``flow`` traced into memory; the spans sent and the run's events."""
    exporter = InMemorySpanExporter()
    log = roost.MemoryLog("run-1")
    tracing = Tracing(processor=SimpleSpanProcessor(exporter), content=content, log=log)
    pending = list(answers)

    async def go() -> None:
        runner = roost.Runner(flow=flow, log=log, on_event=tracing)
        state = await runner.start(message)
        while state.status == "paused" and pending:
            state = await runner.continue_(pending.pop(0))

    asyncio.run(go())
    return list(exporter.get_finished_spans()), log.load()


def by_name(spans: Sequence[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def test_a_run_is_one_trace_of_its_replies_model_calls_and_tools() -> None:
    spans, events = traced_run(flow_from_yaml(TOOL_FLOW, replies=TOOL_REPLIES), ["yes", "no"])
    named = by_name(spans)
    assert sorted(named) == [
        "chat scripted",
        "execute_tool mean",
        "invoke_agent USER",
        "invoke_agent helper",
        "invoke_workflow approve",
    ]
    (run,) = named["invoke_workflow approve"]
    (helper,) = named["invoke_agent helper"]
    assert len({span.context.trace_id for span in spans}) == 1
    assert run.parent is None
    assert helper.parent is not None and helper.parent.span_id == run.context.span_id
    helper_parts = [s for s in spans if s.parent and s.parent.span_id == helper.context.span_id]
    assert sorted(s.name for s in helper_parts) == [
        "chat scripted",
        "chat scripted",
        "execute_tool mean",
        "execute_tool mean",
    ]
    # Every span names its run and the event it stands for.
    seqs = {event.seq: event.type for event in events}
    for span in spans:
        assert span.attributes["roost.run.id"] == "run-1"
        assert span.attributes["gen_ai.operation.name"] == span.name.split()[0]
    kinds = {span.name.split()[0]: seqs[int(span.attributes["roost.seq"])] for span in spans}
    assert kinds == {
        "chat": "llm_call",
        "execute_tool": "tool_call",
        "invoke_agent": "message",
        "invoke_workflow": "run_start",
    }
    refused = [s for s in named["execute_tool mean"] if s.status.status_code == StatusCode.ERROR]
    assert [s.attributes["gen_ai.tool.call.id"] for s in refused] == ["call_0_1"]
    assert helper.start_time <= min(s.start_time for s in helper_parts)
    assert helper.end_time >= max(s.end_time for s in helper_parts)
    notes = [note.name for note in run.events]
    assert notes.count("roost.interrupt") == 2 and notes.count("roost.resume") == 2


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


def test_a_director_choice_holds_the_model_call_that_made_it() -> None:
    flow = flow_from_yaml(
        """
        roost: 1
        name: desk
        agents:
          USER: {role: A person.}
          a: {role: You answer.}
          b: {role: You answer too.}
        channels:
          desk: {members: [a, b], max_rounds: 1, role: Pick who speaks.}
        start: {from: USER, to: desk, content: Hello}
        """,
        replies=["b", "Hi from b.", "TERMINATE"],
    )
    spans, _ = traced_run(flow)
    (choice,) = by_name(spans)["select desk"]
    assert choice.attributes["roost.select.by"] == "llm"
    assert choice.attributes["roost.select.chosen"] == "b"
    assert choice.attributes["roost.select.candidates"] == ("a", "b")
    inside = [s for s in spans if s.parent and s.parent.span_id == choice.context.span_id]
    assert [(s.name, s.attributes["roost.node"]) for s in inside] == [("chat scripted", "desk")]


def test_a_failed_model_call_marks_its_span_its_reply_and_the_run() -> None:
    flow = flow_from_yaml(TOOL_FLOW, replies=[fail("the server is busy")])
    spans, events = traced_run(flow)
    named = by_name(spans)
    (chat,) = named["chat scripted"]
    assert chat.status.status_code == StatusCode.ERROR
    assert chat.status.description == "provider 'scripted': the server is busy"
    assert chat.attributes["error.type"] == "provider_error"
    assert named["invoke_agent helper"][0].status.status_code == StatusCode.ERROR
    # The run's own span is sent when the run ends; rebuilt from its log, it says how it stands.
    assert "invoke_workflow approve" not in named
    (run,) = [s for s in spans_of(events) if s.parent_id is None]
    assert run.error == "the run stopped at an error"
    assert run.attributes["roost.run.status"] == "error"


SECRET = "sk-live-4242-very-secret"


def test_contents_are_sent_only_when_asked_and_secrets_never(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOKEN", SECRET)
    flow = flow_from_yaml(
        """
        roost: 1
        name: leaky
        tools:
          mean: {python: "statistics:fmean", description: The mean.}
        agents:
          USER: {role: A person.}
          helper: {role: You answer., functions: [mean]}
        start: {from: USER, to: helper}
        """,
        replies=[call("mean", data=[1, 3]), "The key ${TOKEN} means 2.", "TERMINATE"],
    )
    plain, _ = traced_run(flow, message=f"my key is {SECRET}")
    dumped = "\n".join(span.to_json() for span in plain)
    assert "my key" not in dumped and "means 2" not in dumped and "[1, 3]" not in dumped
    assert "gen_ai.output.messages" not in dumped and "gen_ai.tool.call.result" not in dumped

    with_content, _ = traced_run(flow, content=True, message=f"my key is {SECRET}")
    dumped = "\n".join(span.to_json() for span in with_content)
    assert SECRET not in dumped and "4242" not in dumped
    (reply,) = by_name(with_content)["invoke_agent helper"]
    assert json.loads(str(reply.attributes["gen_ai.output.messages"])) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "The key *** means 2."}]}
    ]
    (tool,) = by_name(with_content)["execute_tool mean"]
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"data": [1, 3]}
    assert tool.attributes["gen_ai.tool.call.result"] == "2.0"
    (run,) = by_name(with_content)["invoke_workflow leaky"]
    first = run.events[0]
    assert (first.name, first.attributes["roost.content"]) == ("roost.message", "my key is ***")


def _shape(spans: Sequence[ReadableSpan]) -> set[tuple[object, ...]]:
    return {
        (
            s.name,
            s.context.trace_id,
            s.context.span_id,
            s.parent.span_id if s.parent else None,
            s.start_time,
            s.end_time,
            tuple(sorted(s.attributes.items())),
            s.status.status_code,
        )
        for s in spans
    }


def test_the_spans_sent_live_are_those_rebuilt_from_the_log_even_across_processes() -> None:
    flow = roost.load_flow("flows/assistant.yaml")
    exporter = InMemorySpanExporter()
    log = roost.MemoryLog("picnic")

    async def go() -> None:
        # Each step in a Runner (and a Tracing) of its own, as separate processes would.
        first = await roost.Runner(flow=flow, log=log, on_event=_tracing(exporter, log)).start()
        assert first.status == "paused"
        for answer in ["Four of us, in a park.", "Thanks!"]:
            await roost.Runner(flow=flow, log=log, on_event=_tracing(exporter, log)).continue_(
                answer
            )

    asyncio.run(go())
    resource = default_resource()
    rebuilt = [readable_span(record, resource) for record in spans_of(log.load())]
    assert log.load()[-1].type == "terminate"
    assert _shape(exporter.get_finished_spans()) == _shape(rebuilt)
    assert len(rebuilt) == len(exporter.get_finished_spans()) > 5


def _tracing(exporter: InMemorySpanExporter, log: roost.EventLog) -> Tracing:
    return Tracing(processor=SimpleSpanProcessor(exporter), log=log)


def test_ids_come_from_the_run_so_two_runs_never_share_a_trace() -> None:
    flow = flow_from_yaml(TOOL_FLOW, replies=TOOL_REPLIES)
    one = spans_of(roost_events(flow, "run-a"))
    again = spans_of(roost_events(flow, "run-a"))
    other = spans_of(roost_events(flow, "run-b"))
    assert [(s.trace_id, s.span_id) for s in one] == [(s.trace_id, s.span_id) for s in again]
    assert {s.trace_id for s in one}.isdisjoint({s.trace_id for s in other})
    assert len({s.span_id for s in one}) == len(one)


def roost_events(flow: roost.Flow, run_id: str) -> list[roost.Event]:
    log = roost.MemoryLog(run_id)
    state = roost.run_sync(flow, log=log, answer=lambda state: "yes")
    assert state.status == "terminated"
    return log.load()


@pytest.mark.parametrize(
    ("environ", "on"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, False),
    ],
)
def test_tracing_is_off_unless_the_otel_variables_ask(environ: dict[str, str], on: bool) -> None:
    assert tracing_configured(environ) is on


FALLBACK_FLOW = """
roost: 1
name: fallback
providers:
  claude: {kind: anthropic, model: claude-test, api_key: k, fallback: [gpt]}
  gpt: {kind: openai, model: "${MODEL}", api_key: k}
tools:
  mean: {python: "statistics:fmean", description: The mean of some numbers.}
agents:
  USER: {role: A person with numbers.}
  helper: {role: You answer with your tools., functions: [mean]}
start: {from: USER, to: helper, content: "What is the mean of 2, 4 and 9?"}
"""


def as_fallback_calls(events: Sequence[roost.Event]) -> list[roost.Event]:
    """The run's events as if each model call had gone to claude, failed there with an
    overload and been answered by its fallback gpt, each reporting its own tokens."""
    rewritten: list[roost.Event] = []
    number = 0
    for event in events:
        if isinstance(event, LlmCallEvent):
            number += 1
            attempts = (
                LlmAttempt(provider="claude", model="claude-test", outcome="http 529", status=529),
                LlmAttempt(provider="gpt", model="gpt-test", outcome="ok"),
            )
            usage = LlmUsage(prompt_tokens=100 * number, completion_tokens=number)
            answered = {"provider": "claude", "model": "gpt-test"}
            event = event.model_copy(update={**answered, "attempts": attempts, "usage": usage})
        rewritten.append(event)
    return rewritten


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


def test_a_reply_left_open_by_a_stopped_process_ends_failed_at_the_retry() -> None:
    flow = flow_from_yaml(
        FALLBACK_FLOW,
        replies=[call("mean", data=[2, 4, 9]), "The mean is 5.", "TERMINATE"],
        environ={"MODEL": "gpt-test"},
    )
    _, events = traced_run(flow)
    # The process stopped once the tool call was recorded; another one retried the step.
    cut = next(i for i, e in enumerate(events) if isinstance(e, ToolCallEvent)) + 1
    stopped = events[:cut]
    retry = RetryEvent.model_validate(
        {"seq": cut, "run": "run-1", "ts": stopped[-1].ts, "from": "helper", "to": "USER"}
    )
    spans = spans_of([*stopped, retry])
    [reply] = [s for s in spans if s.name == "invoke_agent helper"]
    assert reply.error == "left unfinished by a stopped process"
    [tool] = [s for s in spans if s.name == "execute_tool mean"]
    assert tool.error == "left unfinished by a stopped process"
