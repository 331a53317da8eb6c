"""Budgets through the server (FLOW-LANGUAGE.md section 12): where each limit stands in a
run's summary, and a budget's question answered by a message checked before it waits.

The limits, the spending and the decisions are the engine's (``roost.engine.budget``),
read from the run's state; nothing here decides anything of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.engine.budget import asked_budget, parse_limit, written_limits

if TYPE_CHECKING:
    from roost.runstate import RunState

_NO = ("no", "n")


def standing(state: RunState) -> list[dict[str, Any]]:
    """Each limit of the run's budgets: allowed, spent, left, and its last decision."""
    found = []
    for scope, limit, allowed in written_limits(state):
        spent = _spent(state, scope, limit)
        last = next(
            (e for e in reversed(state.budget_events) if (e.agent, e.limit) == (scope, limit)),
            None,
        )
        found.append(
            {
                "agent": scope,
                "limit": limit,
                "allowed": allowed,
                "spent": round(spent, 9),
                "left": round(max(allowed - spent, 0.0), 9),
                "last": last.action if last is not None else None,
                "provider": last.provider if last is not None else None,
            }
        )
    return found


def asked(state: RunState) -> dict[str, Any] | None:
    """The limit a run paused by its budget asks about, for its ``waiting_for``."""
    event = asked_budget(state)
    if event is None:
        return None
    return {
        "agent": event.agent,
        "limit": event.limit,
        "spent": event.spent,
        "allowed": event.allowed,
        "estimate": event.estimate,
    }


def check_answer(state: RunState, content: str) -> None:
    """Refuses (UsageError) an answer to a budget's question that is neither a new limit
    above what was spent nor no, before it waits in the run's queue."""
    event = asked_budget(state)
    if event is None or content.strip().lower() in _NO:
        return
    parse_limit(content, event.limit, event.spent)


def _spent(state: RunState, scope: str | None, limit: str) -> float:
    if limit == "seconds":
        return state.seconds
    return float(getattr(state.spent_by(scope), limit))
