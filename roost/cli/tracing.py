"""Tracing a command's run when the ``OTEL_*`` variables ask for it.

Off by default, and then OpenTelemetry is never imported. When asked for and
not possible (the packages are missing, an exporter is unknown), the run goes
on untraced after one warning line; the exporters' own complaints (a
collector that does not answer) become one warning line each, never a
traceback. The spans still waiting are sent when the process exits.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from roost.errors import TelemetryError
from roost.events import Event
from roost.ports import EventLog
from roost.telemetry import tracing_from_environment

EventSink = Callable[[Event], None]


def traced(sink: EventSink, log: EventLog) -> EventSink:
    """``sink``, followed by the run's tracing when the environment asks for it."""
    try:
        tracing = tracing_from_environment(log)
    except TelemetryError as error:
        _warn(f"{str(error).removeprefix('tracing: ')}; the run is not traced")
        return sink
    if tracing is None:
        return sink
    _exporter_warnings_as_lines()

    def both(event: Event) -> None:
        sink(event)
        tracing(event)

    return both


def send_spans(events: list[Event]) -> None:
    """Sends a stored run's spans now (``roost export --otlp``) and says how many went."""
    if not events:
        raise TelemetryError("tracing: the run holds no events, so it has no spans to send")
    try:
        from roost.telemetry.otel import send_run
    except ImportError:
        raise TelemetryError(
            "tracing: sending spans needs OpenTelemetry: pip install 'roost[otel]'"
        ) from None
    count = send_run(events)
    print(f"sent {count} spans of run {events[0].run}")


def _warn(text: str) -> None:
    sys.stderr.write(f"roost: warning: tracing: {text}\n")


class _OneLine(logging.Handler):
    """An exporter's complaint as one warning line, its traceback left out."""

    def emit(self, record: logging.LogRecord) -> None:
        _warn(" ".join(record.getMessage().split()))


def _exporter_warnings_as_lines() -> None:
    logger = logging.getLogger("opentelemetry")
    if not any(isinstance(handler, _OneLine) for handler in logger.handlers):
        logger.addHandler(_OneLine(logging.WARNING))
        logger.propagate = False
