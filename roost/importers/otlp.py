"""A stored run as OTLP JSON (``roost export RUN --to otel``): the spans of the live export.

The spans are ``roost.telemetry``'s, made from the events as the live export
makes them (with message contents); this writes them as the OpenTelemetry
collector's file exporter does: ``resourceSpans`` of ``scopeSpans`` of spans,
ids in hex, times in nanoseconds as text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.telemetry.spans import spans_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.events import Event
    from roost.telemetry.records import Attributes, AttributeValue, Note, SpanRecord

_KINDS = {"internal": 1, "client": 3}  # OTLP's SpanKind numbers


def otlp_json(events: Sequence[Event]) -> dict[str, Any]:
    """The run's spans as one OTLP JSON document."""
    spans = [_span(record) for record in spans_of(events, content=True)]
    resource = {"attributes": _attributes({"service.name": "roost"})}
    scope = {"name": "roost", "version": _version()}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]
    }


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("roost")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"


def _span(record: SpanRecord) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": f"{record.trace_id:032x}",
        "spanId": f"{record.span_id:016x}",
        "name": record.name,
        "kind": _KINDS[record.kind],
        "startTimeUnixNano": str(record.start_ns),
        "endTimeUnixNano": str(record.end_ns),
        "attributes": _attributes(record.attributes),
        "events": [_note(note) for note in record.notes],
        "status": {"code": 2, "message": record.error} if record.error else {},
    }
    if record.parent_id is not None:
        span["parentSpanId"] = f"{record.parent_id:016x}"
    return span


def _note(note: Note) -> dict[str, Any]:
    return {
        "timeUnixNano": str(note.time_ns),
        "name": note.name,
        "attributes": _attributes(note.attributes),
    }


def _attributes(attributes: Attributes) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in attributes.items()]


def _value(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"arrayValue": {"values": [_value(item) for item in value]}}
