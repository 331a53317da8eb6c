"""``roost.telemetry.tracing_from_environment``: a Runner's tracer when the OTEL_* variables ask."""

from __future__ import annotations

import sys

import pytest

import roost.telemetry.otel
from roost.errors import TelemetryError
from roost.ports import MemoryLog
from roost.telemetry import tracing_from_environment

UNSET = ("OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment that asks for no traces."""
    for name in (*UNSET, "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_no_tracer_unless_the_environment_asks(quiet: pytest.MonkeyPatch) -> None:
    assert tracing_from_environment() is None
    quiet.setenv("OTEL_TRACES_EXPORTER", "none")
    assert tracing_from_environment() is None


def test_asked_for_it_is_a_tracer_reading_the_runs_log(quiet: pytest.MonkeyPatch) -> None:
    made: list[object] = []

    class Recorded:  # the real Tracing would set up this process's one span processor
        def __init__(self, log: object = None) -> None:
            made.append(log)

    quiet.setattr(roost.telemetry.otel, "Tracing", Recorded)
    quiet.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    log = MemoryLog("run-1")
    assert isinstance(tracing_from_environment(log), Recorded)
    assert made == [log]


def test_asked_for_without_opentelemetry_says_what_to_install(quiet: pytest.MonkeyPatch) -> None:
    quiet.setenv("OTEL_TRACES_EXPORTER", "otlp")
    quiet.setitem(sys.modules, "roost.telemetry.otel", None)  # as if it could not be imported
    with pytest.raises(TelemetryError) as caught:
        tracing_from_environment()
    assert str(caught.value) == (
        "tracing: OTEL_* variables ask for traces, but OpenTelemetry is not installed "
        "(pip install 'roost[otel]')"
    )
