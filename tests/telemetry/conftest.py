"""Runs traced into memory for the telemetry tests, and the flows they trace."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import roost
from roost.events import LlmAttempt, LlmCallEvent, LlmUsage
from roost.telemetry.otel import Tracing

if TYPE_CHECKING:
    from collections.abc import Sequence

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
