"""The one interface the engine sees for every model backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

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
