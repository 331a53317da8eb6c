"""A flow's providers that keep every request they were sent, as a model would see it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.providers.base import Provider, ProviderContext, TextCallback
from roost.providers.registry import build_provider

if TYPE_CHECKING:
    from roost.flow.models import Flow
    from roost.messages import ModelRequest, ModelResponse


class Recording:
    """A flow's providers, each keeping the requests it was sent (messages read at once)."""

    def __init__(self, flow: Flow, usage: Any = None) -> None:
        self.flow = flow
        self.sent: list[tuple[str, ModelRequest]] = []
        self.usage = usage  # request -> Usage to report, like a real model
        self._built: dict[str, Provider] = {}

    def __call__(self, name: str) -> Provider:
        if name not in self._built:
            self._built[name] = _Recorder(self, build_provider(name, self.flow, ProviderContext()))
        return self._built[name]


class _Recorder:
    def __init__(self, source: Recording, inner: Provider) -> None:
        self.source = source
        self.inner = inner
        self.name = inner.name
        self.model = inner.model

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        kept = request.model_copy(update={"messages": tuple(request.messages)})
        self.source.sent.append((self.name, kept))
        answer = await self.inner.complete(request, on_text=on_text)
        if self.source.usage is not None:
            answer = answer.model_copy(update={"usage": self.source.usage(kept)})
        return answer
