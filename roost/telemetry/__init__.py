"""Runs seen through OpenTelemetry: spans built from a run's events.

``roost.telemetry.spans.spans_of(events)`` is a pure function from a run's
events to span records (no OpenTelemetry needed); ``roost.telemetry.otel``
sends them with the OpenTelemetry SDK, while a run goes (``Tracing``, a
Runner's ``on_event``) or later from a stored run (``send_run``).

Tracing is off unless the standard ``OTEL_*`` variables ask for it; this
module answers that question without importing OpenTelemetry, so that a
command that is not traced never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import TelemetryError
from roost.telemetry.environment import content_wanted, tracing_configured

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.events import Event
    from roost.ports import EventLog

__all__ = ["content_wanted", "tracing_configured", "tracing_from_environment"]


def tracing_from_environment(log: EventLog | None = None) -> Callable[[Event], None] | None:
    """A Runner's ``on_event`` tracing the run as the ``OTEL_*`` variables ask; None when off.

    ``log`` is the run's log (see ``roost.telemetry.otel.Tracing``). Raises
    TelemetryError when tracing is asked for and cannot be set up.
    """
    if not tracing_configured():
        return None
    try:
        from roost.telemetry.otel import Tracing
    except ImportError:
        raise TelemetryError(
            "tracing: OTEL_* variables ask for traces, but OpenTelemetry is not installed "
            "(pip install 'roost[otel]')"
        ) from None
    return Tracing(log=log)
