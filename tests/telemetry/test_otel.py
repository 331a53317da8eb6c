"""Sending spans with the OpenTelemetry SDK: what goes live is what the log rebuilds."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import roost
from roost.telemetry.otel import Tracing, default_resource, readable_span
from roost.telemetry.spans import spans_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from opentelemetry.sdk.trace import ReadableSpan


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
