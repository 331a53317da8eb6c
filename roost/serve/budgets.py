"""Budgets through the server: where each limit stands in a run's summary,
and a budget's question answered by a message checked before it waits.

The limits, the spending and the decisions are the engine's, read from the run's state
(``roost.budget_text`` lays them out for every reader); nothing here decides anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.budget_text import standings
from roost.engine.budget import asked_budget, parse_limit

if TYPE_CHECKING:
    from roost.runstate import RunState

_NO = ("no", "n")


def standing(state: RunState) -> list[dict[str, Any]]:
    """Each limit of the run's budgets: allowed, spent, left, and its last decision."""
    return [
        {
            "agent": each.agent,
            "limit": each.limit,
            "allowed": each.allowed,
            "spent": round(each.spent, 9),
            "left": round(each.left, 9),
            "last": each.last.action if each.last is not None else None,
            "provider": each.last.provider if each.last is not None else None,
        }
        for each in standings(state)
    ]


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
