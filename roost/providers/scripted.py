"""The scripted provider: deterministic answers from a list, entirely offline.

It answers from its ``replies`` in order, across every node that uses it. Its
position starts at the number of calls the run's log already records for it
(``context.attempts_so_far``), so a run continued in another process picks up
where it stopped. A reply is a string, ``{tool_calls: [...]}``, ``{error: ...}``
or ``{echo: system|last}``; ``when_exhausted`` decides what comes after the
last one. It never retries by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from roost.errors import ProviderError
from roost.flow.models import (
    ScriptedEcho,
    ScriptedError,
    ScriptedProviderConfig,
    ScriptedToolCalls,
)
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from roost.providers.base import ProviderContext, TextCallback

_NO_USAGE = Usage(calls=1)


class ScriptedProvider:
    """A Provider answering from a fixed list of replies."""

    # It has no limiter, so it never waits for a turn: unless someone observes the calls
    # (``limits.observers``), the engine sets nothing up around them (engine/calls.py).
    takes_turns: ClassVar[bool] = False

    def __init__(self, name: str, config: ScriptedProviderConfig, position: int = 0) -> None:
        self.name = name
        self.model = config.model
        self.config = config
        self.position = position
        # Text replies never change, so each is built once and handed out again.
        self._texts: dict[int, ModelResponse] = {}
        self._count = count = len(config.replies)
        # Where ``repeat_last`` stays once the list is used up (-1: another mode).
        self._last = count - 1 if count and config.when_exhausted == "repeat_last" else -1

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        """The next scripted reply; every call, a failing one included, moves the position."""
        position = self.position
        self.position = position + 1
        # A text reply is made once and handed out again: the common case costs a lookup.
        if position < self._count:
            index = position
        else:
            index = self._last if self._last >= 0 else self._index(position)
        response = self._texts.get(index)
        if response is None:
            response = self._answer(request, position)
        if on_text is not None and response.message.content:
            on_text(response.message.content)
        return response

    def _answer(self, request: ModelRequest, position: int) -> ModelResponse:
        index = self._index(position)
        reply = self.config.replies[index]
        if isinstance(reply, str):
            response = self._texts[index] = self._response(reply)
            return response
        if isinstance(reply, ScriptedError):
            raise ProviderError(self.name, reply.error)
        if isinstance(reply, ScriptedEcho):
            return self._response(_echo(request, reply))
        return self._tool_calls(reply, position)

    def _index(self, position: int) -> int:
        count = len(self.config.replies)
        if position < count:
            return position
        mode = self.config.when_exhausted
        if count and mode == "repeat_last":
            return count - 1
        if count and mode == "cycle":
            return position % count
        raise ProviderError(
            self.name,
            f"the scripted provider has no reply left ({count} scripted, call {position + 1})",
        )

    def _response(self, text: str) -> ModelResponse:
        return ModelResponse(
            message=AssistantMessage(content=text, provider=self.name),
            usage=_NO_USAGE,
            model=self.model,
            provider=self.name,
        )

    def _tool_calls(self, reply: ScriptedToolCalls, call_number: int) -> ModelResponse:
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{call_number}_{index}",
                name=call.name,
                arguments=dict(call.arguments),
            )
            for index, call in enumerate(reply.tool_calls)
        )
        return ModelResponse(
            message=AssistantMessage(tool_calls=calls, provider=self.name),
            usage=_NO_USAGE,
            model=self.model,
            provider=self.name,
        )


def _echo(request: ModelRequest, reply: ScriptedEcho) -> str:
    if reply.echo == "system":
        return request.system
    messages = request.messages
    if not messages:
        return ""
    return messages[-1].content


def create(name: str, config: object, context: ProviderContext) -> ScriptedProvider:
    """The scripted provider ``name``, positioned after the calls the log already holds."""
    if not isinstance(config, ScriptedProviderConfig):
        raise ProviderError(name, "not a scripted provider's configuration")
    return ScriptedProvider(name, config, context.attempts_so_far.get(name, 0))
