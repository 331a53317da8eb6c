"""Runner options as tests write them: a source (``providers=``, ``tools=``...) beside the rest."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from roost.engine.sources import Sources

_SOURCES = frozenset(field.name for field in fields(Sources))


def runner_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` for ``Runner(...)``: the sources among them gathered into ``sources=``."""
    sources = {name: value for name, value in options.items() if name in _SOURCES}
    rest = {name: value for name, value in options.items() if name not in _SOURCES}
    return {**rest, "sources": Sources(**sources)} if sources else rest
