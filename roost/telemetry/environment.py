"""Whether the environment asks for traces: the standard ``OTEL_*`` variables, read cheaply."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

# The variables that turn tracing on: an exporter named, or an OTLP endpoint given.
EXPORTER = "OTEL_TRACES_EXPORTER"
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CONTENT = "ROOST_OTEL_CONTENT"  # "1": spans carry message contents too


def tracing_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for traces: ``OTEL_TRACES_EXPORTER`` or an OTLP endpoint.

    ``OTEL_SDK_DISABLED=true`` and ``OTEL_TRACES_EXPORTER=none`` turn it off.
    """
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    named = env.get(EXPORTER, "").strip().lower()
    if named:
        return named != "none"
    return any(env.get(name, "").strip() for name in ENDPOINTS)


def content_wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``ROOST_OTEL_CONTENT=1`` asks for message contents in the spans."""
    env = os.environ if environ is None else environ
    return env.get(CONTENT, "").strip() == "1"
