"""roost: declarative conversation graphs, run, replayed and drawn.

``await roost.run(flow, message, answer=...)`` (or ``roost.run_sync``) runs a
flow to its end, asking ``answer(pause)`` (a ``Pause``) at each pause, and
returns a frozen ``RunView``; ``await roost.replay(log)`` re-executes a
recorded run and ``flow_of(log)`` reads the flow it follows. ``load_flow(path)``
reads and validates a flow file, its tools included, raising ``FlowError``
whose ``problems`` carry file, line, column and message. ``Runner`` steps a
run one call at a time (``Sources`` says where its answers come from);
``MemoryLog``, ``JsonlLog`` and ``SqlStore`` keep its events, whose types are
exported here too, and ``memory_bank()`` what its flow remembers. In
Jupyter, ``show(item)`` draws a flow or a run (and a cell ending with one
draws it by itself).

Names are imported on first use, so that ``import roost`` (and the console
script's start-up, which a person may interrupt) stays cheap.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roost.api import flow_of, memory_bank, replay, run, run_sync
    from roost.engine import Runner, RunState, Sources
    from roost.errors import FlowError, RoostError, RunStateError
    from roost.events import (
        ErrorEvent,
        Event,
        FlowEvent,
        InterruptEvent,
        LlmCallEvent,
        MessageEvent,
        ResumeEvent,
        RetryEvent,
        RunStartEvent,
        SelectEvent,
        TerminateEvent,
        ToolCallEvent,
        ToolResultEvent,
    )
    from roost.flow import Flow
    from roost.loading import load_flow
    from roost.notebook import show
    from roost.ports import EventLog, MemoryLog
    from roost.runview import Pause, RunView
    from roost.store.jsonl import JsonlLog
    from roost.store.sql import SqlStore

    __version__: str

_EVENTS = (
    "ErrorEvent",
    "Event",
    "FlowEvent",
    "InterruptEvent",
    "LlmCallEvent",
    "MessageEvent",
    "ResumeEvent",
    "RetryEvent",
    "RunStartEvent",
    "SelectEvent",
    "TerminateEvent",
    "ToolCallEvent",
    "ToolResultEvent",
)

# Each name and the module it comes from, imported when the name is first used.
_LAZY = {
    "run": "roost.api",
    "run_sync": "roost.api",
    "memory_bank": "roost.api",
    "replay": "roost.api",
    "flow_of": "roost.api",
    "Pause": "roost.runview",
    "RunView": "roost.runview",
    "show": "roost.notebook",
    "Runner": "roost.engine",
    "Sources": "roost.engine",
    "RunState": "roost.engine",
    "FlowError": "roost.errors",
    "RoostError": "roost.errors",
    "RunStateError": "roost.errors",
    "EventLog": "roost.ports",
    "MemoryLog": "roost.ports",
    **dict.fromkeys(_EVENTS, "roost.events"),
    "Flow": "roost.flow",
    "load_flow": "roost.loading",
    "JsonlLog": "roost.store.jsonl",
    "SqlStore": "roost.store.sql",
}

__all__ = [
    "ErrorEvent",
    "Event",
    "EventLog",
    "Flow",
    "FlowError",
    "FlowEvent",
    "InterruptEvent",
    "JsonlLog",
    "LlmCallEvent",
    "MemoryLog",
    "MessageEvent",
    "Pause",
    "ResumeEvent",
    "RetryEvent",
    "RoostError",
    "RunStartEvent",
    "RunState",
    "RunStateError",
    "RunView",
    "Runner",
    "SelectEvent",
    "Sources",
    "SqlStore",
    "TerminateEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "__version__",
    "flow_of",
    "load_flow",
    "memory_bank",
    "replay",
    "run",
    "run_sync",
    "show",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # looked up once; later uses are plain attribute reads
        return value
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'roost' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _display_in_notebooks() -> None:
    """In IPython (a Jupyter kernel), flows and runs display as their drawings.

    The displays are registered by type name: nothing is imported for them until an
    object of such a type is shown.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "display_formatter"):
        from roost.notebook import register

        register(shell)


def _version() -> str:
    """The installed package's version: pyproject.toml is the one place it is written."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("roost")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"


_display_in_notebooks()
