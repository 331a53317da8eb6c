"""Checks of budgets (docs/budgets.md), on the flow and on its agents.

The limits' ranges and keys are the models' (a zero or negative limit, an
unknown key); here: a ``switch_to`` that names no provider, or one whose price
is unknown while ``cost`` is limited; and a ``cost`` limit on a flow whose
providers' prices are unknown, which could never be kept. A scripted provider
reports no tokens, so it costs nothing and needs no price.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from roost.flow.models import Budget, ScriptedProviderConfig, SwitchTo

if TYPE_CHECKING:
    from roost.flow.describe import Hints
    from roost.flow.models import Flow
    from roost.flow.positions import Path


class Checker(Protocol):
    """What these checks use of ``roost.flow.checks.Checker``."""

    flow: Flow
    hints: Hints

    def known(self, *path: str) -> bool: ...
    def at_value(self, path: Path, message: str) -> None: ...


_FIX = "give it a price: {input: ..., output: ...} (US dollars per million tokens)"


def budgets_of(flow: Flow) -> list[tuple[Path, Budget]]:
    """Every budget of ``flow`` with the keys where it is written: the flow's, then agents'."""
    found: list[tuple[Path, Budget]] = [(("budget",), flow.budget)] if flow.budget else []
    found += [(("agents", n, "budget"), a.budget) for n, a in flow.agents.items() if a.budget]
    return found


def unpriced(flow: Flow, name: str) -> bool:
    """Whether calls through provider ``name`` would have no known price."""
    from roost.pricing import price_of  # pricing reads the flow's models: imported late

    config = flow.providers.get(name)
    if config is None or isinstance(config, ScriptedProviderConfig):
        return False
    return price_of(config)[0] is None


def check_budgets(c: Checker) -> None:
    """Each budget can be kept: its switch_to exists and is priced, its providers are priced."""
    flow = c.flow
    budgets = budgets_of(flow)
    for path, budget in budgets:
        action = budget.on_exhausted
        if not isinstance(action, SwitchTo):
            continue
        where = (*path, "on_exhausted", "switch_to")
        target = action.switch_to
        if not c.known("providers", target):
            hint = c.hints(target, flow.providers)
            c.at_value(
                where, f"switch_to names no provider: {target!r} is not under providers{hint}"
            )
        elif budget.cost is not None and unpriced(flow, target):
            c.at_value(
                where,
                f"switch_to provider {target!r} has no known price while cost is limited; {_FIX}",
            )
    if any(budget.cost is not None for _, budget in budgets):
        _priced(c, next(path for path, b in budgets if b.cost is not None))


def _priced(c: Checker, path: Path) -> None:
    """A cost limit needs the price of every provider the flow may call."""
    names = [name for name in c.flow.providers if unpriced(c.flow, name)]
    if names:
        listed = ", ".join(repr(n) for n in names)
        c.at_value(
            (*path, "cost"),
            f"a cost limit needs every provider's price, and the price of {listed} is unknown "
            f"(not in roost's table of models); {_FIX}",
        )


def check_budget(flow: Flow, cost: float) -> None:
    """A cost limit given from outside (``--budget``, ``budget=``) can be kept on ``flow``:
    a positive number, and every provider priced. Raises UsageError naming what is not."""
    from roost.errors import UsageError

    if isinstance(cost, bool) or not isinstance(cost, int | float) or not cost > 0:
        raise UsageError(f"a budget is a cost in US dollars above 0, not {cost!r}")
    names = [name for name in flow.providers if unpriced(flow, name)]
    if names:
        listed = ", ".join(repr(n) for n in names)
        raise UsageError(
            f"{flow.path}: a budget of {cost:g} needs every provider's price, and the price of "
            f"{listed} is unknown (not in roost's table of models); {_FIX}"
        )
