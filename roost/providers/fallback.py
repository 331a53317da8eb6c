"""A provider that tries a chain of providers in order until one answers.

Built by the registry for a provider entry with ``fallback: [...]``. Each
provider has made its own retries before the next is tried. An answer that
broke off after part of it was shown is not handed to a fallback: the person
saw it, so the run stops at an error that ``roost retry`` resumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.errors import ProviderError
from roost.providers._retry import StreamInterruptedError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.messages import ModelRequest, ModelResponse
    from roost.providers.base import Provider, TextCallback


def with_fallbacks(chain: Sequence[Provider]) -> Provider:
    """One Provider answering with the first of ``chain`` that succeeds."""
    if not chain:
        raise ValueError("a fallback chain needs at least one provider")
    return FallbackProvider(chain)


class FallbackProvider:
    """The first provider of the chain, falling back to the others in order."""

    def __init__(self, chain: Sequence[Provider]) -> None:
        self.chain = tuple(chain)
        self.name = chain[0].name
        self.model = chain[0].model

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        """The first successful answer; every attempt of every provider is in ``attempts``."""
        attempts: list[dict[str, Any]] = []
        failures: list[ProviderError] = []
        for provider in self.chain:
            try:
                response = await provider.complete(request, on_text=on_text)
            except StreamInterruptedError as error:
                error.attempts = (*attempts, *error.attempts)
                raise
            except ProviderError as error:
                attempts += error.attempts or _one(provider, "error")
                failures.append(error)
                continue
            # A provider that keeps no attempts of its own (the scripted one) still gets its
            # answer counted: a scripted fallback's position is read from these records.
            answered = response.attempts or _one(provider, "ok")
            return response.model_copy(update={"attempts": (*attempts, *answered)})
        raise _all_failed(self.name, failures, tuple(attempts))

    async def aclose(self) -> None:
        """Closes every provider of the chain that holds connections."""
        for provider in self.chain:
            closer = getattr(provider, "aclose", None)
            if closer is not None:
                await closer()


def _one(provider: Provider, outcome: str) -> tuple[dict[str, Any], ...]:
    return ({"provider": provider.name, "model": provider.model, "outcome": outcome},)


def _all_failed(
    name: str, failures: list[ProviderError], attempts: tuple[dict[str, Any], ...]
) -> ProviderError:
    reasons = "; then ".join(str(f) for f in failures)
    # A model that found the request too long makes compressing the history worth a try.
    overflow = any(failure.context_overflow for failure in failures)
    return ProviderError(
        name,
        f"it and every fallback failed: {reasons}",
        attempts=attempts,
        context_overflow=overflow,
    )
