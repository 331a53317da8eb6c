"""Known models' context windows and prices, and what model calls cost.

roost ships a table of known models (``models.toml`` beside this module): each
one's context window and list price per million tokens. A provider entry of a
flow overrides both (``context_window``, ``price: {input, cached_input,
output}``). A cost worked out from the table is *estimated* (list prices
change, and the table is a snapshot); one from the flow's own ``price`` is not.

``cost_of(usage, provider)`` prices one call, ``run_cost(events)`` a whole run
from its log alone (the provider entries are read from the flow text the log
records), ``context_window_of(provider)`` says how many tokens a model sees.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import yaml

from roost.flow.models import PriceConfig

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

DEFAULT_CONTEXT_WINDOW = 128_000  # tokens, for a model neither the flow nor the table knows
_PER = 1_000_000  # prices are per million tokens
# Costs are written rounded to this many decimals of a dollar: the table's prices have at
# most three decimals per million tokens, so a call's cost is exact to the billionth of a
# dollar and the rounding only takes off the float's noise (1.5149999999999999e-05).
COST_DECIMALS = 9


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens: input, input read from a cache, output."""

    input: float
    cached_input: float
    output: float


@dataclass(frozen=True, slots=True)
class KnownModel:
    """One row of roost's table."""

    name: str
    context_window: int
    price: Price | None


class PriceSetting(Protocol):
    """A flow's ``price`` key (``roost.flow.models.PriceConfig``)."""

    @property
    def input(self) -> float: ...
    @property
    def cached_input(self) -> float | None: ...
    @property
    def output(self) -> float: ...


class ProviderSettings(Protocol):
    """What pricing reads of a provider entry (any of the flow's provider configs)."""

    @property
    def model(self) -> str: ...
    @property
    def context_window(self) -> int | None: ...
    @property
    def price(self) -> PriceSetting | None: ...


class TokenCounts(Protocol):
    """A call's usage (``roost.events.LlmUsage`` or ``roost.messages.Usage``)."""

    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int: ...


class Cost(NamedTuple):
    """What calls cost in US dollars; ``amount`` None when the model's price is unknown.

    ``estimated``: worked out (at least in part) from roost's table of list prices.
    """

    amount: float | None
    estimated: bool


# --------------------------------------------------------------------------- the table


@cache
def table() -> dict[str, KnownModel]:
    """roost's table of known models, by name and by alias (lower case)."""
    text = resources.files(__package__).joinpath("models.toml").read_text(encoding="utf-8")
    rows: dict[str, Any] = tomllib.loads(text)["models"]
    known: dict[str, KnownModel] = {}
    for name, row in rows.items():
        price = None
        if "input" in row:
            cached = row.get("cached_input", row["input"])
            price = Price(float(row["input"]), float(cached), float(row["output"]))
        model = KnownModel(name, int(row["context_window"]), price)
        for key in (name, *row.get("aliases", ())):
            known[key.lower()] = model
    return known


@cache
def prices_as_of() -> str:
    """When the table's prices were last checked (year and month)."""
    text = resources.files(__package__).joinpath("models.toml").read_text(encoding="utf-8")
    return str(tomllib.loads(text)["prices_as_of"])


@lru_cache(maxsize=256)
def known_model(model: str) -> KnownModel | None:
    """The table's row for ``model``: by its name, a dated or tagged variant, or an alias.

    ``gpt-4o-2024-08-06`` is ``gpt-4o``; ``openai/gpt-4o-mini`` is ``gpt-4o-mini`` (the
    longest known name wins); ``gpt-4.5`` is not ``gpt-4``.
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    known = table()
    found = known.get(name)
    if found is not None:
        return found
    best: KnownModel | None = None
    best_length = 0
    for key, row in known.items():
        if len(key) > best_length and name.startswith(key) and name[len(key)] in "-:@":
            best, best_length = row, len(key)
    return best


# --------------------------------------------------------------------------- one provider


def context_window_of(provider: ProviderSettings | None, model: str | None = None) -> int:
    """The tokens a model sees at most: the entry's ``context_window``, else the table's
    (for ``model``, else the entry's model), else ``DEFAULT_CONTEXT_WINDOW``."""
    if provider is not None and provider.context_window is not None:
        return provider.context_window
    name = model or (provider.model if provider is not None else "")
    row = known_model(name) if name else None
    return row.context_window if row is not None else DEFAULT_CONTEXT_WINDOW


def price_of(
    provider: ProviderSettings | None, model: str | None = None
) -> tuple[Price | None, bool]:
    """The price of a call and whether it is estimated (read from the table).

    The entry's own ``price`` first; else the table's row for ``model`` (the model
    that answered, when it is known), else for the entry's model.
    """
    setting = provider.price if provider is not None else None
    if setting is not None:
        cached = setting.cached_input if setting.cached_input is not None else setting.input
        return Price(setting.input, cached, setting.output), False
    for name in (model, provider.model if provider is not None else None):
        row = known_model(name) if name else None
        if row is not None and row.price is not None:
            return row.price, True
    return None, True


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
    events = list(events)
    if not any(e.type == "llm_call" and _used_tokens(e.usage) for e in events):
        return None
    cost = run_cost(events)
    return None if cost.unpriced else rounded(cost.amount)


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


class _Entry(NamedTuple):
    """The pricing keys of a provider entry as a recorded flow text writes them."""

    model: str
    context_window: int | None
    price: PriceSetting | None


def provider_entries(flow_text: str) -> dict[str, ProviderSettings]:
    """The provider entries of a flow text, as far as pricing reads them.

    Read from the YAML as written, without the environment: a value that is a
    ``${NAME}`` placeholder (or anything else that is not what the key takes)
    counts as unset, so the table decides.
    """
    try:
        document = yaml.safe_load(flow_text)
    except yaml.YAMLError:
        return {}
    providers = document.get("providers") if isinstance(document, dict) else None
    if not isinstance(providers, dict):
        return {}
    entries: dict[str, ProviderSettings] = {}
    for name, entry in providers.items():
        if not isinstance(entry, dict):
            continue
        model = entry.get("model")
        window = entry.get("context_window")
        price: PriceSetting | None = None
        try:
            price = PriceConfig.model_validate(entry["price"]) if "price" in entry else None
        except ValueError:
            price = None
        entries[str(name)] = _Entry(
            model if isinstance(model, str) else "",
            window if type(window) is int and window > 0 else None,
            price,
        )
    return entries


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
            entries = _entries_of(event.flow.text)
        elif kind == "llm_call" and event.usage is not None:
            answered = answered_by(event)
            total = total.add(cost_of(event.usage, entries.get(answered), model=event.model))
    return total


@lru_cache(maxsize=64)
def _entries_of(flow_text: str) -> dict[str, ProviderSettings]:
    return provider_entries(flow_text)


def answered_by(call: Any) -> str:
    """The provider entry that gave a call's answer: the last attempt's, else the call's."""
    attempts = call.attempts
    if attempts and attempts[-1].outcome == "ok":
        return str(attempts[-1].provider)
    return str(call.provider)
