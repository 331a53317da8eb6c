"""Providers that answer each model call with the next recorded ``llm_call`` of their name.

Each answer is the recorded one: its text, tool calls, reasoning, usage and
attempts, or its error (a too-long request is refused again, so the run
compresses as it did). No model is called.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from roost.engine.call_records import finish_of
from roost.engine.digests import request_settings
from roost.engine.recorded.stops import Stops
from roost.errors import CONTEXT_TOO_LONG, ProviderError
from roost.events import OUTSIDE_CALLS, LlmCallEvent, LlmResponse
from roost.messages import ModelRequest, ModelResponse, Usage
from roost.runstate import assistant_message, usage_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.engine.sources import RunPosition
    from roost.events import Event
    from roost.providers.base import Provider, TextCallback


class ReplayedError(ProviderError):
    """A recorded failed call, failing again with the recorded message."""

    def __init__(
        self,
        provider: str,
        text: str,
        attempts: tuple[dict[str, Any], ...],
        *,
        context_overflow: bool = False,
    ) -> None:
        super().__init__(provider, text, attempts=attempts, context_overflow=context_overflow)
        self.args = (text,)

    def __str__(self) -> str:
        return str(self.args[0])


class RecordedProviders:
    """``providers(name)`` for the Runner: each answers from its recorded calls, in order.

    ``capture`` keeps the request made at that seq (``captured``), with the settings of
    its provider in the flow in force (``captured_settings``).
    """

    def __init__(
        self, recorded: Sequence[Event], stops: Stops | None = None, capture: int | None = None
    ) -> None:
        self.stops = stops or Stops([])
        self.calls: dict[str, deque[LlmCallEvent]] = defaultdict(deque)
        for event in recorded:
            if isinstance(event, LlmCallEvent) and event.purpose not in OUTSIDE_CALLS:
                self.calls[event.provider].append(event)
        self._providers: dict[str, RecordedProvider] = {}
        self.capture = capture
        self.captured: ModelRequest | None = None
        self.captured_settings = ""
        self._run: RunPosition | None = None

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def __call__(self, name: str) -> Provider:
        if name not in self._providers:
            self._providers[name] = RecordedProvider(name, self.calls[name], self.stops, self)
        return self._providers[name]

    def keep(self, request: ModelRequest, provider: str) -> None:
        """Keeps ``request`` when it is the one asked for (its llm_call gets this seq)."""
        if self.capture is not None and self.stops.next_seq() == self.capture:
            # Its messages may be a lazy view of a history that grows: read them now.
            self.captured = request.model_copy(update={"messages": tuple(request.messages)})
            run = self._run
            self.captured_settings = request_settings(run.flow, provider) if run else ""


class RecordedProvider:
    """One provider entry replaying its recorded answers."""

    def __init__(
        self,
        name: str,
        calls: deque[LlmCallEvent],
        stops: Stops,
        source: RecordedProviders | None = None,
    ) -> None:
        self.name = name
        self.calls = calls
        self.stops = stops
        self.source = source
        self.model = calls[0].model if calls else "replay"

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        await self.stops.cancel_if_due()
        self.stops.stop_here()
        if self.source is not None:
            self.source.keep(request, self.name)
        if not self.calls:
            raise ProviderError(self.name, "replay: no recorded answer left for this call")
        call = self.calls.popleft()
        self.model = call.model
        # As the provider reported them, so the replayed llm_call records the same.
        attempts = tuple(attempt.model_dump() for attempt in call.attempts)
        if call.error is not None:
            # A request the model found too long is refused again: the run compresses as it did.
            overflow = any(attempt.outcome == CONTEXT_TOO_LONG for attempt in call.attempts)
            raise ReplayedError(self.name, call.error, attempts, context_overflow=overflow)
        response = call.response or LlmResponse()
        message = assistant_message(response, self.name)
        if on_text is not None and message.content:
            on_text(message.content)
        return ModelResponse.model_construct(
            message=message,
            usage=usage_of(call.usage) if call.usage is not None else Usage(calls=1),
            model=call.model,
            provider=self.name,
            attempts=attempts,
            notes=response.notes,
            **finish_of(response),  # a cut answer is replayed as cut: read for no marker
        )
