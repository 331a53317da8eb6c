"""roost's spans sent with the OpenTelemetry SDK: while a run goes, or later from its events.

``Tracing`` is a Runner's ``on_event``: it folds the run's events into spans
(``roost.telemetry.spans``) and hands each finished one to a span processor.
``send_run`` sends a stored run's spans at once. Where spans go is what the
standard ``OTEL_*`` variables say (``exporters_from_environment``), unless
the caller gives an exporter or a processor of its own.

This module needs ``opentelemetry-sdk`` (and an exporter package for OTLP):
``pip install 'roost[otel]'``. Nothing imports it unless tracing is asked for.
"""

from __future__ import annotations

import atexit
import logging
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import TYPE_CHECKING

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event as SdkEvent
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, SynchronousMultiSpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link as SdkLink
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from roost.errors import TelemetryError
from roost.telemetry.environment import EXPORTER, content_wanted
from roost.telemetry.spans import SpanFold, spans_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from roost.events import Event
    from roost.ports import EventLog
    from roost.telemetry.records import SpanRecord

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
_PROTOCOLS = {"grpc": "otlp_proto_grpc", "http/protobuf": "otlp_proto_http"}


class Tracing:
    """A Runner's ``on_event`` that sends the run's spans as they complete.

    ``exporter`` or ``processor`` says where they go (default: where the
    ``OTEL_*`` variables say); ``content`` adds message texts (default:
    ``ROOST_OTEL_CONTENT=1``). ``log`` is the run's log, read once when the
    first event seen is not the run's first (a run continued by this process),
    so that spans begun earlier end here with the ids they began with.
    The run's own span is sent when the run terminates.
    """

    def __init__(
        self,
        exporter: SpanExporter | None = None,
        *,
        processor: SpanProcessor | None = None,
        content: bool | None = None,
        log: EventLog | None = None,
        resource: Resource | None = None,
    ) -> None:
        if processor is None:
            processor = BatchSpanProcessor(exporter) if exporter else environment_processor()
        self.processor = processor
        self.content = content_wanted() if content is None else content
        self.resource = resource or default_resource()
        self._log = log
        self._folds: dict[str, SpanFold] = {}

    def __call__(self, event: Event) -> None:
        fold = self._folds.get(event.run)
        if fold is None:
            fold = self._folds[event.run] = self._fold_before(event)
        for record in fold.add(event):
            self.processor.on_end(readable_span(record, self.resource))

    def flush(self, timeout_millis: int = 30_000) -> bool:
        """Sends what is waiting; False when it could not be sent in time."""
        return self.processor.force_flush(timeout_millis)

    def _fold_before(self, event: Event) -> SpanFold:
        fold = SpanFold(content=self.content)
        if event.seq > 0 and self._log is not None and self._log.run_id == event.run:
            for earlier in self._log.load():
                if earlier.seq >= event.seq:
                    break
                fold.add(earlier)  # sent (or not) by the process that recorded them
        return fold


def send_run(
    events: Iterable[Event],
    exporters: list[SpanExporter] | None = None,
    *,
    content: bool | None = None,
) -> int:
    """Sends every span of a run's events now; returns how many. Raises TelemetryError."""
    content = content_wanted() if content is None else content
    resource = default_resource()
    spans = [readable_span(record, resource) for record in spans_of(events, content=content)]
    for exporter in exporters if exporters is not None else exporters_from_environment():
        with _exporter_messages() as messages:
            result = exporter.export(spans)
            exporter.shutdown()
        if result is not SpanExportResult.SUCCESS:
            # The OTLP exporters keep the address they sent to; another exporter may not.
            where = getattr(exporter, "_endpoint", None)
            to = f" to {where}" if isinstance(where, str) else ""
            raise TelemetryError(f"tracing: the spans were not sent{to}: {_reason(messages)}")
    return len(spans)


def _reason(messages: list[str]) -> str:
    """Why an export failed, from what the exporter logged: its first complaint, shortened."""
    if not messages:
        return "the exporter gave no reason"
    first = messages[0].removeprefix("Transient error ")
    return first.split(" encountered while exporting")[0]


def readable_span(record: SpanRecord, resource: Resource) -> ReadableSpan:
    """The SDK's finished span for a record, ready for any exporter."""
    parent = None
    if record.parent_id is not None:
        parent = SpanContext(record.trace_id, record.parent_id, False, _SAMPLED)
    status = Status(StatusCode.UNSET)
    if record.error is not None:
        status = Status(StatusCode.ERROR, record.error)
    return ReadableSpan(
        name=record.name,
        context=SpanContext(record.trace_id, record.span_id, False, _SAMPLED),
        parent=parent,
        resource=resource,
        attributes=record.attributes,
        events=[SdkEvent(n.name, n.attributes, n.time_ns) for n in record.notes],
        links=[
            SdkLink(SpanContext(link.trace_id, link.span_id, False, _SAMPLED), link.attributes)
            for link in record.links
        ],
        kind=_KINDS[record.kind],
        status=status,
        start_time=record.start_ns,
        end_time=record.end_ns,
        instrumentation_scope=InstrumentationScope("roost", _version()),
    )


def default_resource() -> Resource:
    """The resource the ``OTEL_*`` variables describe, its service named ``roost`` by default."""
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "roost"}))
    return resource


def exporters_from_environment(environ: Mapping[str, str] | None = None) -> list[SpanExporter]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (``otlp`` when unset), each configured
    by its own ``OTEL_EXPORTER_*`` variables. ``otlp`` speaks the protocol that
    ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` or ``OTEL_EXPORTER_OTLP_PROTOCOL`` names
    (``http/protobuf`` unless it says ``grpc``).
    """
    import os

    env = os.environ if environ is None else environ
    names = [n.strip().lower() for n in (env.get(EXPORTER) or "otlp").split(",") if n.strip()]
    return [_exporter(name, env)() for name in names if name != "none"]


_shared: SpanProcessor | None = None


def environment_processor() -> SpanProcessor:
    """One batching processor per process over the environment's exporters, flushed at exit."""
    global _shared
    if _shared is None:
        exporters = exporters_from_environment()
        if len(exporters) == 1:
            _shared = BatchSpanProcessor(exporters[0])
        else:
            multi = SynchronousMultiSpanProcessor()  # type: ignore[no-untyped-call]
            for exporter in exporters:
                multi.add_span_processor(BatchSpanProcessor(exporter))
            _shared = multi
        atexit.register(_shared.shutdown)
    return _shared


def _exporter(name: str, env: Mapping[str, str]) -> type[SpanExporter]:
    if name == "otlp":
        protocol = (
            env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or "http/protobuf"
        ).strip()
        if protocol not in _PROTOCOLS:
            raise TelemetryError(
                f"tracing: OTLP protocol {protocol!r} is not supported: use http/protobuf or grpc"
            )
        name = _PROTOCOLS[protocol]
    found = entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        raise TelemetryError(
            f"tracing: {EXPORTER}: no installed package provides the {name!r} span exporter "
            "(for OTLP: pip install 'roost[otel]')"
        )
    try:
        loaded: type[SpanExporter] = next(iter(found)).load()
    except ImportError as exc:
        raise TelemetryError(f"tracing: the {name!r} span exporter does not load: {exc}") from exc
    return loaded


class _Collected(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


@contextmanager
def _exporter_messages() -> Iterator[list[str]]:
    """The exporters' complaints while a block runs, kept rather than printed."""
    logger = logging.getLogger("opentelemetry")
    handler = _Collected()
    kept = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = kept


def _version() -> str:
    try:
        return version("roost")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"
