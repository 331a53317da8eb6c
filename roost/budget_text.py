"""A run's budgets in words: each limit with what was spent, and each decision.

Read off the fold of a run's events, so the terminal, ``roost show``, the run page
and the server's page say the same thing in the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roost.events import BudgetEvent
    from roost.runstate import RunState


def written_limits(state: RunState) -> list[tuple[str | None, str, float]]:
    """Every limit of the run's budgets as (scope, limit, allowed): the flow in force's
    (read from its recorded text), with the limits raised since in their place."""
    from roost.errors import FlowError
    from roost.flow.yamlread import build, compose  # bounded: a recorded text may be hostile

    try:
        data = build(compose(state.flow_text, "flow"), "flow").data if state.flow_text else {}
    except FlowError:
        data = {}
    found: dict[tuple[str | None, str], float] = {}
    places: list[tuple[str | None, object]] = [(None, data.get("budget"))]
    agents = data.get("agents")
    places += [(str(n), a.get("budget")) for n, a in (agents or {}).items() if isinstance(a, dict)]
    for scope, budget in places:
        if not isinstance(budget, dict):
            continue
        for limit in ("cost", "tokens", "model_calls", "tool_calls", "seconds"):
            value = budget.get(limit)
            if isinstance(value, int | float) and not isinstance(value, bool):
                found[(scope, limit)] = float(value)
    found.update(state.raised)
    return [(scope, limit, allowed) for (scope, limit), allowed in found.items()]


@dataclass(frozen=True, slots=True)
class Standing:
    """Where one limit stands: what it allows, what its scope spent, its last decision."""

    agent: str | None  # None: the run's own budget
    limit: str
    allowed: float
    spent: float
    last: BudgetEvent | None

    @property
    def left(self) -> float:
        return max(self.allowed - self.spent, 0.0)


def standings(state: RunState) -> list[Standing]:
    """Each limit of the run's budgets, as it stands in ``state``."""
    found = []
    for scope, limit, allowed in written_limits(state):
        last = next(
            (e for e in reversed(state.budget_events) if (e.agent, e.limit) == (scope, limit)),
            None,
        )
        found.append(Standing(scope, limit, allowed, _spent(state, scope, limit), last))
    return found


def budget_lines(state: RunState) -> list[str]:
    """Each limit of the run's budgets: what it allows, what was spent, what happened."""
    lines = []
    for each in standings(state):
        limit = each.limit
        whose = f"{each.agent}'s budget" if each.agent else "budget"
        said = (
            f"{whose}: {limit} {bare(limit, each.spent)} of {amount(limit, each.allowed)} "
            f"spent, {amount(limit, each.left)} left"
        )
        last = each.last
        if last is not None:
            said += {"stop": ", stopped the run", "ask": ", asked for a new limit",
                     "switch_to": f", switched to {last.provider}", "raised": ", raised"}[
                last.action
            ]  # fmt: skip
        lines.append(said)
    return lines


def _spent(state: RunState, scope: str | None, limit: str) -> float:
    if limit == "seconds":
        return state.seconds
    return float(getattr(state.spent_by(scope), limit))


def amount(limit: str, value: float) -> str:
    """A budget's amount as people read it: ``$0.43``, ``1,200 tokens``, ``4 model calls``."""
    if limit == "cost":
        from roost.pricing import format_amount

        return format_amount(value)
    if limit == "seconds":
        return f"{value:.1f} s"
    return f"{value:,.0f} {limit.replace('_', ' ')}"


def budget_words(event: BudgetEvent) -> str:
    """A budget's decision in one line: what was spent of what, and what happens now."""
    whose = f"{event.agent}'s budget" if event.agent else "budget"
    limit = event.limit
    if event.action == "raised":
        return f"{whose}: the {limit} limit is now {amount(limit, event.allowed)}"
    spent = bare(limit, event.spent)
    said = f"{whose}: {spent} of {amount(limit, event.allowed)} spent"
    if event.estimate:
        said += f"; the next would add {bare(limit, event.estimate)}"
    then = {
        "stop": "the run stops",
        "ask": "it asks for a new limit",
        "switch_to": f"switching to {event.provider}",
    }[event.action]
    return f"{said}; {then}"


def bare(limit: str, value: float) -> str:
    """An amount without its unit, where the limit's amount beside it names the unit."""
    return amount(limit, value) if limit in ("cost", "seconds") else f"{value:,.0f}"
