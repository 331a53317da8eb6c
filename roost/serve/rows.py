"""How the API words a run: its row in a listing, and who it waits for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.events import InterruptEvent
from roost.nodes.directors import candidates
from roost.serve import budgets

if TYPE_CHECKING:
    from roost.flow import Flow
    from roost.runstate import RunState
    from roost.store.sql import RunInfo


def run_row(info: RunInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "flow": info.flow_name,
        "flow_path": info.flow_path,
        "title": info.title,
        "status": info.status,
        "messages": info.messages,
        "tokens": info.tokens,
        "next_seq": info.next_seq,
        "parent": info.parent,
        "fork_at": info.fork_at,
        "created": info.created,
        "updated": info.updated,
    }


def waiting_for(flow: Flow | None, state: RunState) -> dict[str, Any] | None:
    """Who the run waits for and how to answer: None unless it is paused at an interrupt."""
    pending = state.pending
    if state.status != "paused" or not isinstance(pending, InterruptEvent):
        return None
    choices: list[str] = []
    if pending.reason == "manual_select" and flow is not None and pending.from_ in flow.channels:
        choices = list(candidates(flow, state, pending.from_))
    return {
        "node": pending.from_,
        "answering": pending.to,
        "reason": pending.reason or "human",
        "tool_call": pending.tool_call,
        "tool_calls": list(pending.tool_calls) if pending.tool_calls else None,
        "choices": choices,
        "budget": budgets.asked(state),
    }
