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

from roost.pricing._costs import (
    COST_DECIMALS,
    Cost,
    CostTally,
    RunCost,
    answered_by,
    cost_of,
    format_amount,
    reported_cost,
    rounded,
    run_cost,
    short_text,
)
from roost.pricing._settings import (
    PriceSetting,
    ProviderSettings,
    TokenCounts,
    provider_entries,
)
from roost.pricing._table import (
    DEFAULT_CONTEXT_WINDOW,
    KnownModel,
    Price,
    context_window_of,
    known_model,
    price_of,
    prices_as_of,
    table,
)

__all__ = [
    "COST_DECIMALS",
    "DEFAULT_CONTEXT_WINDOW",
    "Cost",
    "CostTally",
    "KnownModel",
    "Price",
    "PriceSetting",
    "ProviderSettings",
    "RunCost",
    "TokenCounts",
    "answered_by",
    "context_window_of",
    "cost_of",
    "format_amount",
    "known_model",
    "price_of",
    "prices_as_of",
    "provider_entries",
    "reported_cost",
    "rounded",
    "run_cost",
    "short_text",
    "table",
]
