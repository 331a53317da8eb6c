"""What a child run is made of: its id, its linked log, the call it answers, its outcome.

``ChildRuns`` (in ``roost.engine.child_runs``, given the ``Runner`` it starts)
runs a ``flow:`` tool's sub-flow with its own Runner on a ``StampedLog``,
whose ``run_start`` event names the parent run and the tool call that started
it, so a person can open the child from the parent's ``tool_result`` (its
``child_run`` field); ``outcome_of`` turns the child's events into the tool's
result.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from roost.events import Event, InterruptEvent, ToolCallEvent, ToolResultEvent
from roost.runstate import fold
from roost.tools.base import ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.runstate import RunState


def new_child_id() -> str:
    """A run id in the store's style: ``20261130-144110-3f9a2c``."""
    return f"{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def open_call(
    parent: Sequence[Event], tool: str, arguments: dict[str, Any], claimed: set[str]
) -> str | None:
    """The parent's latest unanswered call of ``tool`` with ``arguments`` not yet ``claimed``.

    What a child run answers when the engine did not say which call started it;
    the id found is added to ``claimed``, so parallel calls alike get one each.
    """
    answered = {e.id for e in parent if isinstance(e, ToolResultEvent)}
    for event in reversed(parent):
        if (
            isinstance(event, ToolCallEvent)
            and event.name == tool
            and event.arguments == arguments
            and event.id not in answered
            and event.id not in claimed
        ):
            claimed.add(event.id)
            return event.id
    return None


def outcome_of(events: Sequence[Event], name: str, run_id: str) -> ToolOutcome:
    """The child's last message as the tool's result; a child stopped at an error is an error.

    A child paused because one of its own tools waits for approval has no answer
    yet: that is an error result too, naming the tool and the run to continue.
    """
    state = fold(events)
    spent = state.spent_by(None).record() or None  # counted toward the parent's budget
    outcome = _outcome(state, name, run_id)
    return replace(outcome, spent=spent) if spent else outcome


def _outcome(state: RunState, name: str, run_id: str) -> ToolOutcome:
    pending = state.pending
    if state.status == "error":
        why = getattr(pending, "content", "") or "it stopped at an error"
        return ToolOutcome(f"sub-flow {name!r} failed: {why}", is_error=True, child_run=run_id)
    if isinstance(pending, InterruptEvent) and pending.reason == "tool_approval":
        tool = (pending.tool_call or {}).get("name", "?")
        text = f"sub-flow {name!r} is waiting for approval of its tool {tool!r} (run {run_id})"
        return ToolOutcome(text, is_error=True, child_run=run_id)
    if isinstance(pending, InterruptEvent) and pending.reason == "tool_plan":
        text = f"sub-flow {name!r} is waiting for approval of its tool calls (run {run_id})"
        return ToolOutcome(text, is_error=True, child_run=run_id)
    for entry in reversed(state.history):
        if entry.state == "success":
            return ToolOutcome(entry.content, child_run=run_id)
    return ToolOutcome("", child_run=run_id)
