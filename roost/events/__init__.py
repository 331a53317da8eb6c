"""The event log's types (docs/events.md).

A run is an append-only list of these. Each event has ``seq`` (0, 1, 2, ...
within its run), ``type``, ``run`` and ``ts`` (ISO 8601, UTC). Field names are
a contract with programs outside roost: they may be added to, never renamed.
``from`` is a Python keyword, so models name the field ``from_`` and
serialise it as ``from``.

The events are in ``roost.events._models``, the records they hold in
``roost.events._records``, reading and writing their JSON in ``roost.events._codec``
and the texts and times they hold in ``roost.events._texts``; every name is
imported from here.
"""

from __future__ import annotations

from roost.events._codec import event_adapter, event_dict, event_json, parse_event
from roost.events._models import (
    OUTSIDE_CALLS,
    BackgroundEvent,
    BudgetEvent,
    BudgetLimit,
    CompactEvent,
    ErrorEvent,
    Event,
    FlowEvent,
    HookEvent,
    InterruptEvent,
    LlmCallEvent,
    MemoryEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    SelectEvent,
    SkillsEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
    nodes_named,
)
from roost.events._records import (
    BackgroundNote,
    FlowRecord,
    ImageRecord,
    LlmAttempt,
    LlmResponse,
    LlmUsage,
    MemoryEntry,
    RecordedReasoning,
    RecordedToolCall,
    RouteRecord,
    SkillInfo,
    TimelineEntry,
    memory_entry,
)
from roost.events._texts import iso_bound, map_texts, now_iso, valid_text, valid_texts

__all__ = [
    "OUTSIDE_CALLS",
    "BackgroundEvent",
    "BackgroundNote",
    "BudgetEvent",
    "BudgetLimit",
    "CompactEvent",
    "ErrorEvent",
    "Event",
    "FlowEvent",
    "FlowRecord",
    "HookEvent",
    "ImageRecord",
    "InterruptEvent",
    "LlmAttempt",
    "LlmCallEvent",
    "LlmResponse",
    "LlmUsage",
    "MemoryEntry",
    "MemoryEvent",
    "MessageEvent",
    "RecordedReasoning",
    "RecordedToolCall",
    "ResumeEvent",
    "RetryEvent",
    "RouteRecord",
    "RunStartEvent",
    "SelectEvent",
    "SkillInfo",
    "SkillsEvent",
    "TerminateEvent",
    "TimelineEntry",
    "ToolCallEvent",
    "ToolResultEvent",
    "event_adapter",
    "event_dict",
    "event_json",
    "iso_bound",
    "map_texts",
    "memory_entry",
    "nodes_named",
    "now_iso",
    "parse_event",
    "valid_text",
    "valid_texts",
]
