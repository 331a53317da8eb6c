"""What pricing reads of a flow: the provider entries' model, window and price.

Protocols, so that pricing takes any provider config of the flow's models (or an
entry read back from a recorded flow text) without depending on which it is.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import yaml


class PriceSetting(Protocol):
    """A flow's ``price`` key (``roost.flow.models.PriceConfig``; pricing reads it by its
    fields, so that the flow's models may ask pricing what a model costs)."""

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
        price = _price(entry.get("price"))
        entries[str(name)] = _Entry(
            model if isinstance(model, str) else "",
            window if type(window) is int and window > 0 else None,
            price,
        )
    return entries


class _Price(NamedTuple):
    input: float
    cached_input: float | None
    output: float


_PRICE_KEYS = frozenset({"input", "cached_input", "output"})


def _price(value: object) -> PriceSetting | None:
    """A ``price`` as the flow's models take it (numbers at least 0, no other key); else None."""
    if not isinstance(value, dict) or not set(value) <= _PRICE_KEYS:
        return None
    found: dict[str, float | None] = {}
    for key in _PRICE_KEYS:
        number = value.get(key)
        if number is None and key == "cached_input":
            found[key] = None
        elif isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
            return None
        else:
            found[key] = float(number)
    inputs, outputs = found["input"], found["output"]
    assert inputs is not None and outputs is not None
    return _Price(inputs, found["cached_input"], outputs)
