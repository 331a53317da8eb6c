"""The part of ``complete`` every SDK backend shares: attempts, retries, the answer.

A backend subclasses ``HttpProvider`` and writes one method, ``_attempt``:
one request (streamed or not) turned into an ``Answer``. Retries, attempt
records and error translation happen here, around it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from roost.messages import AssistantMessage, ModelRequest, ModelResponse, ReasoningPart, Usage
from roost.providers._common import MAX_ANSWER_CHARS, OWNER, Settings, TextSink, too_long
from roost.providers._errors import html_error
from roost.providers._retry import AttemptHooks, call_with_retries

if TYPE_CHECKING:
    from types import ModuleType

    from roost.providers.base import TextCallback


@dataclass(frozen=True)
class Answer:
    """What one successful request gave; see ``ModelResponse`` for the finish fields."""

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None
    cut: bool = False
    refused: bool = False
    notes: tuple[str, ...] = ()


class Closable(Protocol):
    """An SDK client: something with connections to close."""

    async def close(self) -> None: ...


Client = TypeVar("Client", bound=Closable)

# Finish reasons, in each API's own words, of an answer that did not end by itself:
# Chat Completions ``length``, Anthropic ``max_tokens`` and a full context window,
# Responses ``max_output_tokens`` (the reason of an ``incomplete`` response).
CUT_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded"}
)
# ... and of one the model declined to give, or a content filter stopped.
REFUSAL_REASONS = frozenset({"content_filter", "refusal"})


def make_answer(
    message: AssistantMessage,
    usage: Usage,
    model: str,
    finish_reason: str | None,
    *,
    notes: Sequence[str] = (),
    refusal: bool = False,
) -> Answer:
    """An Answer whose ``cut`` and ``refused`` flags follow its finish reason.

    ``refusal`` marks an answer that carried refusal text (Chat's ``refusal``
    field, a Responses ``refusal`` part) whatever its finish reason.
    """
    return Answer(
        message=message,
        usage=usage,
        model=model,
        finish_reason=finish_reason,
        cut=finish_reason in CUT_REASONS,
        refused=refusal or finish_reason in REFUSAL_REASONS,
        notes=tuple(notes),
    )


class HttpProvider(Generic[Client]):
    """A Provider that reaches a model through an SDK; see ``roost.providers.base``."""

    sdk: ModuleType  # the SDK module whose exceptions ``_attempt`` may raise

    def __init__(self, settings: Settings) -> None:
        self.name = settings.name
        self.model = settings.model
        self._settings = settings
        self._hooks = AttemptHooks(settings)
        self._sdk_client: Client | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def client(self) -> Client:
        """The SDK client, made on first use (so a missing key fails the call, not the run).

        One per event loop: an HTTP connection pool cannot move between loops.
        """
        loop = asyncio.get_running_loop()
        if self._sdk_client is None or self._client_loop is not loop:
            self._sdk_client = self._new_client()
            self._client_loop = loop
        return self._sdk_client

    def _new_client(self) -> Client:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Closes the SDK client and its pooled connections; the next call makes a new one.

        A client left open keeps its keep-alive connections until the process
        exits, when they are torn down with warnings about unclosed transports.
        """
        client, self._sdk_client = self._sdk_client, None
        loop, self._client_loop = self._client_loop, None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    @property
    def settings(self) -> Settings:
        return self._settings

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        """One whole answer to ``request``; streamed text goes to ``on_text`` as it comes."""

        async def attempt(sink: TextSink) -> Answer:
            return await self._attempt(request, sink)

        answer, attempts = await call_with_retries(self._settings, self.sdk, attempt, on_text)
        message = answer.message.model_copy(
            update={"provider": self.name, "reasoning": _tagged(answer.message, self.name)}
        )
        return ModelResponse(
            message=message,
            usage=answer.usage,
            model=answer.model or self.model,
            provider=self.name,
            attempts=attempts,
            finish_reason=answer.finish_reason,
            cut=answer.cut,
            refused=answer.refused,
            notes=answer.notes,
        )

    async def _attempt(self, request: ModelRequest, sink: TextSink) -> Answer:
        raise NotImplementedError


def _tagged(message: AssistantMessage, name: str) -> tuple[ReasoningPart, ...]:
    """The message's reasoning, each part marked with the provider that produced it.

    The mark travels with the part through the event log, so the part goes
    back to its maker even when the engine files the answer under the name of
    a fallback chain.
    """
    return tuple(
        part.model_copy(update={"provider_details": {**(part.provider_details or {}), OWNER: name}})
        for part in message.reasoning
    )


WholeBody = Callable[[dict[str, Any], Settings], Answer]
StreamReader = Callable[[Any, TextSink, Settings], Awaitable[Answer]]


async def decode_answer(
    result: Any, sink: TextSink, settings: Settings, whole: WholeBody, stream: StreamReader
) -> Answer:
    """The answer of one SDK call: a whole body or a stream, refusing an HTML page.

    ``sink.opened`` marks that the server answered, so that a later failure of the
    stream is known to have happened after the call got through.
    """
    sink.opened = True
    if isinstance(result, str):
        raise html_error(settings)
    if not settings.stream:
        # warnings=False: a server's odd value (12.5 tokens) is checked later, not printed.
        answer = whole(result.model_dump(warnings=False), settings)
        if len(answer.message.content) > MAX_ANSWER_CHARS:
            raise too_long(settings)
        return answer
    if "html" in result.response.headers.get("content-type", ""):
        raise html_error(settings)
    # Closed however the reading ends, so no connection or generator is left to the collector.
    async with result:
        return await stream(result, sink, settings)
