"""OpenTelemetry: OTLP JSON spans following the GenAI conventions (placeholder)."""

from __future__ import annotations

from typing import Any

from roost.importers.model import Conversation, ImportFormatError


def read(data: Any, file: str) -> Conversation:
    raise ImportFormatError(f"{file}: otel import is not built yet")
