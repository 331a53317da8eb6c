"""Builds a flow's providers by kind, importing an SDK only when a flow uses it."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from roost.flow.models import Flow
from roost.providers.base import Provider

# kind -> "module:factory". Each factory is called as
# factory(name, config, context) and returns a Provider. Modules are imported
# lazily so that a scripted flow never pays for importing an SDK.
FACTORIES: dict[str, str] = {
    "scripted": "roost.providers.scripted:create",
    "openai": "roost.providers.openai_chat:create",
    "openai-responses": "roost.providers.openai_responses:create",
    "anthropic": "roost.providers.anthropic:create",
}


@dataclass(frozen=True)
class ProviderContext:
    """What a factory may need beyond its own config.

    ``attempts_so_far`` maps a provider name to the number of calls it has
    already answered in the run's log (the scripted provider's position).
    ``secrets`` are values that must never appear in an error message.
    """

    attempts_so_far: Mapping[str, int] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()


class ProviderFactory(Protocol):
    def __call__(self, name: str, config: Any, context: ProviderContext) -> Provider: ...


def _factory(kind: str) -> ProviderFactory:
    module_name, _, attribute = FACTORIES[kind].partition(":")
    factory: ProviderFactory = getattr(importlib.import_module(module_name), attribute)
    return factory


def build_provider(
    name: str, flow: Flow, context: ProviderContext, _chain: frozenset[str] = frozenset()
) -> Provider:
    """The provider called ``name`` in ``flow``, wrapped with its fallbacks when it has any."""
    config = flow.providers[name]
    primary = _factory(config.kind)(name, config, context)
    # Validation refuses fallbacks that lead back; a flow built without it must not recurse.
    within = _chain | {name}
    others = [other for other in config.fallback if other not in within]
    if not others:
        return primary
    chain = [primary] + [build_provider(other, flow, context, within) for other in others]
    with_fallbacks = importlib.import_module("roost.providers.fallback").with_fallbacks
    provider: Provider = with_fallbacks(chain)
    return provider
