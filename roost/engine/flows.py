"""Which flow a run follows, and when another flow may take over.

A run follows the flow its ``run_start`` records until a ``flow`` event names
another one (``--flow FILE`` on continue, retry and fork): each event belongs
to the part of the run under the flow in force when it was written. A new
flow may take over only if it keeps every node the history names, so that
the state folded from the log still means the same thing under it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.errors import EventLogError, FlowError
from roost.events import (
    ErrorEvent,
    Event,
    FlowEvent,
    FlowRecord,
    LlmCallEvent,
    RunStartEvent,
    SelectEvent,
    nodes_named,
    valid_text,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.flow.models import Flow


@dataclass(frozen=True, slots=True)
class FlowPart:
    """The events from seq ``start`` on (until the next part) follow ``record``."""

    start: int
    record: FlowRecord


def flow_record(flow: Flow) -> FlowRecord:
    """What ``run_start`` and ``flow`` events record of ``flow``: its text as written."""
    text = flow.text
    return FlowRecord(
        path=valid_text(flow.path),  # a file name need not be UTF-8
        name=valid_text(flow.name),
        hash=text_hash(text),
        text=text,
    )


def text_hash(text: str) -> str:
    """``sha256:<hex>`` of a flow's text, as the events record it."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def flow_parts(events: Sequence[Event]) -> list[FlowPart]:
    """The run's parts, one per flow that was in force, in order."""
    return [
        FlowPart(event.seq, event.flow)
        for event in events
        if isinstance(event, RunStartEvent | FlowEvent)
    ]


def flow_in_force(events: Sequence[Event]) -> FlowRecord | None:
    """The flow the run follows after ``events``; None when they hold no flow at all."""
    for event in reversed(events):
        if isinstance(event, RunStartEvent | FlowEvent):
            return event.flow
    return None


def flow_in_log(events: Sequence[Event], ref: str, *, shown: bool = False) -> Flow:
    """The flow the run whose log holds ``events`` follows now, loaded from its recorded text.

    That of its latest ``flow`` event, else its ``run_start``'s; loaded as the flow
    language only, so nothing the flow names (a tool's module, an MCP server) is
    imported or started. EventLogError, naming ``ref``, when there is no run_start.
    To go on with the run it reads the environment, as a run of it does; ``shown``
    (only to show it) reads none: a run from elsewhere decides nothing about yours.
    """
    from roost.flow import load_flow_text, load_recorded_flow

    record = flow_in_force(events)
    if record is None or not isinstance(events[0], RunStartEvent):
        raise EventLogError(f"{ref}: the run has no run_start event")
    load = load_recorded_flow if shown else load_flow_text
    flow: Flow = load(record.text, record.path)
    return flow


def history_nodes(events: Sequence[Event]) -> dict[str, tuple[int, bool]]:
    """Every node the events name: its first seq, and whether it was used as a channel."""
    found: dict[str, tuple[int, bool]] = {}
    for event in events:
        channel = event.channel if isinstance(event, SelectEvent) else None
        for name in nodes_named(event):
            seq, was_channel = found.get(name, (event.seq, False))
            found[name] = (seq, was_channel or name == channel)
    return found


def check_keeps_history(flow: Flow, events: Sequence[Event]) -> None:
    """Refuses ``flow`` (FlowError, located in its file) when it lacks a node the run used.

    A node the history names must still be there, and a channel must still be a
    channel: the run's state (who spoke to whom, which director chose whom) is
    read from the history under the new flow.
    """
    problems = []
    for name, (seq, was_channel) in history_nodes(events).items():
        kind = flow.node_kind(name)
        if kind is None:
            message = (
                f"the run's history names {name!r} (event {seq}), which this flow does not "
                "have: a flow that takes over a run must keep every node the run has used"
            )
        elif was_channel and kind != "channel":
            message = (
                f"{name!r} is a channel in the run's history (event {seq}) but an agent in "
                "this flow: a flow that takes over a run must keep its channels"
            )
        else:
            continue
        section = "channels" if was_channel and kind is None else "agents"
        problems.append(flow.problem((section, name), message))
    if problems:
        raise FlowError(problems)


def caused_by_flow(events: Sequence[Event], error: ErrorEvent) -> bool:
    """True when ``error`` came from the flow itself (a template, a provider or tool that
    cannot be set up), not from a model call that failed: retrying under the same flow
    fails the same way, so the way out is a fixed flow.
    """
    # A failed model call is recorded right before the error entry it causes.
    before = next((e for e in reversed(events) if e.seq == error.seq - 1), None)
    failed_call = isinstance(before, LlmCallEvent) and before.error is not None
    return not failed_call
