"""The span records a run's events become, and the ids and times they carry.

A record is plain data: what OpenTelemetry calls a span (a name, ids, a
parent, a start and an end, attributes, timed notes, links), built without
OpenTelemetry so that the core never needs it. ``roost.telemetry.otel`` turns
records into the SDK's spans.

Ids are derived from the run's id and the seq of the event a span begins at,
so the spans sent while a run goes on and those rebuilt later from its stored
events are the same spans: a run's trace id is the same in every process that
continues it, and sending a run twice sends the same ids twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from typing import Literal, TypeAlias

# What an attribute may hold, as OpenTelemetry allows: a scalar or a list of one kind.
AttributeValue: TypeAlias = (
    str | bool | int | float | tuple[str, ...] | tuple[int, ...] | tuple[float, ...]
)
Attributes: TypeAlias = dict[str, AttributeValue]
SpanKind: TypeAlias = Literal["internal", "client"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Note:
    """Something that happened at one moment inside a span (OpenTelemetry's span event)."""

    name: str
    time_ns: int
    attributes: Attributes = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Link:
    """A pointer to a span of another trace: the run this one was forked from or called by."""

    trace_id: int
    span_id: int
    attributes: Attributes = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span, as the events say it happened.

    ``error`` is the failure's description when the span failed, else None.
    """

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    kind: SpanKind
    start_ns: int
    end_ns: int
    attributes: Attributes
    error: str | None = None
    notes: tuple[Note, ...] = ()
    links: tuple[Link, ...] = ()


def trace_id_of(run_id: str) -> int:
    """The 128-bit trace id of a run: the same for the run wherever it is traced."""
    return _bits(128, "trace", run_id)


def span_id_of(run_id: str, what: str, seq: int) -> int:
    """The 64-bit id of the span of ``what`` that begins at event ``seq`` of the run."""
    return _bits(64, "span", run_id, what, str(seq))


def run_span_id(run_id: str) -> int:
    """The id of a run's own span, the parent of every other span of its trace."""
    return span_id_of(run_id, "run", 0)


def _bits(size: int, *parts: str) -> int:
    digest = sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[: size // 8], "big") or 1  # an id of zero is invalid


def time_ns(ts: str) -> int | None:
    """Nanoseconds since 1970 of an event's ``ts`` (ISO 8601), or None when it is not a time."""
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the log writes UTC
    return ((moment - _EPOCH) // _MICROSECOND) * 1000
