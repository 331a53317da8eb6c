"""What one model call, and a whole run from its log, cost in US dollars."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from roost.pricing._settings import ProviderSettings, TokenCounts, provider_entries
from roost.pricing._table import price_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_PER = 1_000_000  # prices are per million tokens
# Costs are written rounded to this many decimals of a dollar: the table's prices have at
# most three decimals per million tokens, so a call's cost is exact to the billionth of a
# dollar and the rounding only takes off the float's noise (1.5149999999999999e-05).
COST_DECIMALS = 9


class Cost(NamedTuple):
    """What calls cost in US dollars; ``amount`` None when the model's price is unknown.

    ``estimated``: worked out (at least in part) from roost's table of list prices.
    """

    amount: float | None
    estimated: bool


def cost_of(
    usage: TokenCounts | None, provider: ProviderSettings | None, *, model: str | None = None
) -> Cost:
    """What a call that used ``usage`` cost through ``provider`` (``model``: the one that
    answered, when it differs from the entry's). No tokens cost nothing, exactly."""
    if usage is None or not (usage.prompt_tokens or usage.completion_tokens):
        return Cost(0.0, False)
    price, estimated = price_of(provider, model)
    if price is None:
        return Cost(None, True)
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    amount = (
        (usage.prompt_tokens - cached) * price.input
        + cached * price.cached_input
        + usage.completion_tokens * price.output
    ) / _PER
    return Cost(amount, estimated)


# --------------------------------------------------------------------------- a whole run


@dataclass(frozen=True, slots=True)
class RunCost:
    """The cost of a run's model calls.

    ``amount`` sums the calls whose price is known; ``unpriced`` counts the calls
    that used tokens of a model with no known price (so ``amount`` is a lower bound).
    """

    amount: float = 0.0
    estimated: bool = False
    unpriced: int = 0

    def __add__(self, other: RunCost) -> RunCost:
        return RunCost(
            self.amount + other.amount,
            self.estimated or other.estimated,
            self.unpriced + other.unpriced,
        )

    def add(self, cost: Cost) -> RunCost:
        """This total with one call's ``cost`` added."""
        if cost.amount is None:
            return RunCost(self.amount, self.estimated, self.unpriced + 1)
        return RunCost(self.amount + cost.amount, self.estimated or cost.estimated, self.unpriced)

    def text(self) -> str:
        """The cost as people read it: ``$0.0123 (estimated)``, ``$0.00``, ``unknown``."""
        if self.unpriced and not self.amount:
            return "unknown"
        shown = format_amount(self.amount)
        notes = []
        if self.estimated:
            notes.append("estimated")
        if self.unpriced:
            notes.append(
                f"without {self.unpriced} call{'s' if self.unpriced != 1 else ''} of unknown price"
            )
        return f"{shown} ({', '.join(notes)})" if notes else shown


def rounded(amount: float) -> float:
    """A dollar amount as roost writes it: rounded to ``COST_DECIMALS`` decimals."""
    return round(amount, COST_DECIMALS)


def reported_cost(events: Iterable[Any]) -> float | None:
    """A run's cost as a number for a file or an API (rounded); None when no call reported
    tokens, or when one's price is unknown (the sum would only be a lower bound)."""
    return CostTally().extended(events).reported()


@dataclass(frozen=True, slots=True)
class CostTally:
    """A run's cost so far, taken on event by event: what a reader that follows a growing
    log (a server answering for a run at each step) adds its new events to, instead of
    pricing the whole log again. Frozen: ``extended`` gives a new tally."""

    total: RunCost = RunCost()
    used: bool = False  # a call reported tokens
    flow_text: str | None = None  # the flow in force, whose entries price the next calls

    def extended(self, events: Iterable[Any]) -> CostTally:
        """This tally with ``events`` (the log's next ones, in order) taken on."""
        total, used, flow_text = self.total, self.used, self.flow_text
        for event in events:
            kind = event.type
            if kind in ("run_start", "flow"):
                flow_text = event.flow.text
            elif kind == "llm_call" and event.usage is not None:
                used = used or _used_tokens(event.usage)
                entries = entries_of(flow_text) if flow_text is not None else {}
                price = cost_of(event.usage, entries.get(answered_by(event)), model=event.model)
                total = total.add(price)
        return CostTally(total, used, flow_text)

    def reported(self) -> float | None:
        """As ``reported_cost`` says."""
        if not self.used or self.total.unpriced:
            return None
        return rounded(self.total.amount)


def _used_tokens(usage: TokenCounts | None) -> bool:
    return usage is not None and bool(usage.prompt_tokens or usage.completion_tokens)


def short_text(cost: RunCost) -> str:
    """The cost in a table's narrow column: ``~`` marks an estimate, ``+`` calls of unknown
    price left out, ``?`` a cost nothing is known of."""
    if cost.unpriced and not cost.amount:
        return "?"
    mark = "~" if cost.estimated else ""
    return mark + format_amount(cost.amount) + ("+" if cost.unpriced else "")


def format_amount(amount: float) -> str:
    """US dollars with the digits that matter: ``$1.23``, ``$0.0042``, ``$0.00``."""
    if amount == 0:
        return "$0.00"
    if amount < 0.00005:  # would show as $0.0000, which reads as free
        return "<$0.0001"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"


def run_cost(
    events: Iterable[Any], providers: Mapping[str, ProviderSettings] | None = None
) -> RunCost:
    """What the model calls recorded in ``events`` cost.

    Each call is priced through the entry of the provider that answered it (a
    fallback's, when one did) in the flow in force at that point of the log
    (``run_start``, then each ``flow`` event), unless ``providers`` gives the entries.
    """
    total = RunCost()
    entries: Mapping[str, ProviderSettings] = providers or {}
    for event in events:
        kind = event.type
        if kind in ("run_start", "flow") and providers is None:
            entries = entries_of(event.flow.text)
        elif kind == "llm_call" and event.usage is not None:
            answered = answered_by(event)
            total = total.add(cost_of(event.usage, entries.get(answered), model=event.model))
    return total


@lru_cache(maxsize=64)
def entries_of(flow_text: str) -> dict[str, ProviderSettings]:
    """The provider entries of a recorded flow text (``provider_entries``), read once."""
    return provider_entries(flow_text)


def answered_by(call: Any) -> str:
    """The provider entry that gave a call's answer: the last attempt's, else the call's."""
    attempts = call.attempts
    if attempts and attempts[-1].outcome == "ok":
        return str(attempts[-1].provider)
    return str(call.provider)
