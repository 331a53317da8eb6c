"""Helpers for the engine's tests: flows from YAML text, runs on a memory log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakes.runners import runner_options

from roost.engine import Runner
from roost.ports import MemoryLog
from roost.testing import unchecked_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event
    from roost.flow.models import Flow


def make_flow(text: str, path: str | Path | None = None) -> Flow:
    """A Flow from YAML text, unchecked: the engine's tests give most tools in code."""
    return unchecked_flow(text, path="<string>" if path is None else path)


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
    return Runner(flow=make_flow(text), log=log, **runner_options(options)), log
