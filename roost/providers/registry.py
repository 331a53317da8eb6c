"""Builds a flow's providers by kind, importing an SDK only when a flow uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.flow.models import Flow
    from roost.providers.base import Provider, ProviderContext, ProviderFactory

# Each backend is imported on first use, by a plain import inside its loader, so
# that a scripted flow never pays for importing an SDK.


def _scripted() -> ProviderFactory:
    from roost.providers.scripted import create

    return create


def _openai_chat() -> ProviderFactory:
    from roost.providers.openai_chat import create

    return create


def _openai_responses() -> ProviderFactory:
    from roost.providers.openai_responses import create

    return create


def _anthropic() -> ProviderFactory:
    from roost.providers.anthropic import create

    return create


# A flow's provider ``kind`` -> the loader of that backend's factory.
FACTORIES: dict[str, Callable[[], ProviderFactory]] = {
    "scripted": _scripted,
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
}


def _factory(kind: str) -> ProviderFactory:
    return FACTORIES[kind]()


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
    from roost.providers.fallback import with_fallbacks  # its retry machinery loads httpx

    chain = [primary] + [build_provider(other, flow, context, within) for other in others]
    return with_fallbacks(chain)
