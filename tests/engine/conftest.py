"""Helpers for the engine's tests: flows from YAML text, runs on a memory log."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import yaml

from roost.engine import Runner
from roost.flow.models import Flow
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event


def make_flow(text: str, path: str | Path | None = None) -> Flow:
    """A Flow from YAML text, with its path and text set as the loader would."""
    text = textwrap.dedent(text)
    flow = Flow.model_validate(yaml.safe_load(text))
    flow._text = text
    if path is not None:
        flow._path = str(path)
    return flow


def kinds(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def messages(events: list[Event]) -> list[tuple[str, str, str]]:
    """(from, to, content) of each message event."""
    found = []
    for event in events:
        if event.type == "message":
            found.append((event.from_, event.to, event.content))
    return found


def runner_for(text: str, **options: Any) -> tuple[Runner, MemoryLog]:
    log = MemoryLog("run-1")
    return Runner(make_flow(text), log, **options), log
