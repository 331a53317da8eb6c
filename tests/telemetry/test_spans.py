"""A run's events as OpenTelemetry spans: the tree, choices, failures, contents, open replies.

Spans are read back through the OpenTelemetry SDK's in-memory exporter, as a
tracing backend would get them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from opentelemetry.trace import StatusCode

from roost.events import RetryEvent, ToolCallEvent
from roost.telemetry.spans import spans_of
from roost.testing import call, fail, flow_from_yaml
from tests.telemetry.conftest import FALLBACK_FLOW, TOOL_FLOW, TOOL_REPLIES, by_name, traced_run

if TYPE_CHECKING:
    import pytest


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
