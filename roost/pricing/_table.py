"""roost's table of known models (``models.toml``): context windows and list prices."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roost.pricing._settings import ProviderSettings

DEFAULT_CONTEXT_WINDOW = 128_000  # tokens, for a model neither the flow nor the table knows


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


@cache
def table() -> dict[str, KnownModel]:
    """roost's table of known models, by name and by alias (lower case)."""
    import tomllib  # the table is read once, when a model is first looked up

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
    import tomllib  # the table is read once, when a model is first looked up

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
