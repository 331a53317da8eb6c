"""The one interface the engine sees for every model backend, and what makes one.

``Provider`` is what the engine calls; ``ProviderFactory`` is what each backend
module exposes as ``create(name, config, context)``, and ``ProviderContext``
what a factory may need beyond its config. They live here, below every backend
and the registry, so that a backend module imports only this interface.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from roost.messages import ModelRequest, ModelResponse

TextCallback = Callable[[str], None]


@runtime_checkable
class Provider(Protocol):
    """A configured model endpoint.

    ``complete`` sends one request and returns one whole answer. When
    ``on_text`` is given and the backend streams, it is called with each piece
    of text as it arrives, so a terminal can show it; the returned response
    still holds the whole text. Failures raise ``roost.errors.ProviderError``
    (after the backend's own retries); nothing else escapes.
    """

    name: str
    model: str

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse: ...


@dataclass(frozen=True)
class ProviderContext:
    """What a factory may need beyond its own config.

    ``attempts_so_far`` maps a provider name to the number of calls it has
    already answered in the run's log (the scripted provider's position).
    ``secrets`` are values that must never appear in an error message.
    ``env_files`` is what the flow's .env files set: a vendor's key may come
    from there when the environment has none.
    """

    attempts_so_far: Mapping[str, int] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()
    env_files: Mapping[str, str] = field(default_factory=dict)


class ProviderFactory(Protocol):
    """A backend's ``create``: the provider called ``name``, from its flow entry ``config``."""

    def __call__(self, name: str, config: Any, context: ProviderContext) -> Provider: ...
