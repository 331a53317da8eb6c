"""OpenAI Chat Completions, and every server that speaks it.

DeepSeek, vLLM, Ollama and llama.cpp all answer ``/chat/completions`` when
``base_url`` points at them. The system prompt is the first message; every
assistant tool call is followed by its ``tool`` message, in order; the
DeepSeek-style ``reasoning_content`` of the running tool loop is sent back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, assert_never

import openai

from roost.errors import ProviderError
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningPart,
    ReplyFormat,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from roost.providers._common import Settings, TextSink, require_key, settings_from
from roost.providers._errors import broken_stream
from roost.providers._history import (
    OwnReasoning,
    current_loop_start,
    paired,
    result_text,
)
from roost.providers._http import Answer, HttpProvider, decode_answer, make_answer
from roost.providers._toolcalls import ToolCallAccumulator, arguments_text, make_call
from roost.providers._usage import UsageCheck

if TYPE_CHECKING:
    from roost.providers._retry import AttemptHooks
    from roost.providers.base import ProviderContext


def create(name: str, config: Any, context: ProviderContext) -> OpenAIChatProvider:
    """A Chat Completions provider for the flow's entry ``name``."""
    return OpenAIChatProvider(settings_from(name, config, context, key_env="OPENAI_API_KEY"))


def openai_client(settings: Settings, hooks: AttemptHooks) -> openai.AsyncOpenAI:
    """An SDK client whose every HTTP request is recorded as an attempt."""
    http_client = openai.DefaultAsyncHttpxClient(**hooks.client_options())
    return openai.AsyncOpenAI(
        api_key=require_key(settings),
        base_url=settings.base_url,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        http_client=http_client,
    )


class OpenAIChatProvider(HttpProvider[openai.AsyncOpenAI]):
    """``kind: openai``: the Chat Completions API."""

    sdk = openai

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai_client(self.settings, self._hooks)

    async def _attempt(self, request: ModelRequest, sink: TextSink) -> Answer:
        body = _to_wire(request, self.settings)
        result: Any = await self.client().chat.completions.create(**body)
        return await decode_answer(result, sink, self.settings, _from_wire, _read_stream)


# --------------------------------------------------------------------------- to the wire


def _to_wire(request: ModelRequest, settings: Settings) -> dict[str, Any]:
    """The keyword arguments of ``chat.completions.create`` for ``request``."""
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": _messages(request, settings.name),
        "stream": settings.stream,
    }
    if settings.stream:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [_tool(spec) for spec in request.tools]
    if request.reply_format is not None:
        body["response_format"] = _response_format(request.reply_format)
    if settings.max_tokens:
        key = "max_completion_tokens" if settings.reasoning_effort else "max_tokens"
        body[key] = settings.max_tokens
    if settings.reasoning_effort:
        body["reasoning_effort"] = settings.reasoning_effort
    if settings.openai_temperature is not None:
        body["temperature"] = settings.openai_temperature
    return body


def _response_format(reply_format: ReplyFormat) -> dict[str, Any]:
    """Structured Outputs: the reply is JSON following the schema."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": reply_format.name,
            "schema": reply_format.json_schema,
            "strict": reply_format.strict,
        },
    }


def _messages(request: ModelRequest, name: str) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if request.system:
        wire.append({"role": "system", "content": request.system})
    history = paired(request.messages, name)
    loop_start = current_loop_start(history)
    own = OwnReasoning(name)
    for index, message in enumerate(history):
        match message:
            case UserMessage():
                wire.append({"role": "user", "content": _user_content(message)})
            case AssistantMessage():
                reasoning = own.parts(message) if index >= loop_start else ()
                wire.append(_assistant(message, reasoning))
            case ToolResultMessage():
                wire.append(
                    {
                        "role": "tool",
                        "tool_call_id": message.tool_call_id,
                        "content": result_text(message),
                    }
                )
            case _:
                assert_never(message)
    return wire


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    """A user message's text, or its text and images as content parts (images as data URLs)."""
    if not message.images:
        return message.content
    parts: list[dict[str, Any]] = (
        [{"type": "text", "text": message.content}] if message.content else []
    )
    for image in message.images:
        url = f"data:{image.media_type};base64,{image.data}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _assistant(message: AssistantMessage, reasoning: tuple[ReasoningPart, ...]) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.content or None}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(call)},
            }
            for call in message.tool_calls
        ]
    texts: list[str] = []
    for part in reasoning:
        match part.kind:
            case "reasoning_content":
                texts.append(part.text)
            case "thinking" | "redacted_thinking" | "reasoning":
                pass  # another API's format: this one could not read it
            case _:
                assert_never(part.kind)
    if texts:
        wire["reasoning_content"] = "".join(texts)
    return wire


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


# --------------------------------------------------------------------------- from the wire


def _from_wire(data: dict[str, Any], settings: Settings) -> Answer:
    """An Answer from a whole (non-streamed) chat completion."""
    choices = data.get("choices") or []
    if not choices:
        raise ProviderError(settings.name, f"{settings.where()} answered with no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = tuple(
        make_call(call.get("id") or f"call_{n}", fn.get("name") or "", fn.get("arguments") or "")
        for n, call in enumerate(message.get("tool_calls") or [])
        if (fn := call.get("function") or {})
    )
    reasoning_text = message.get("reasoning_content") or message.get("reasoning") or ""
    refusal = message.get("refusal") or ""
    usage, notes = _usage(data.get("usage"))
    return make_answer(
        AssistantMessage(
            # A refusal is what the model said instead: the person reads it as the reply.
            content=message.get("content") or refusal,
            tool_calls=calls,
            reasoning=_reasoning(reasoning_text),
        ),
        usage,
        data.get("model") or "",
        choice.get("finish_reason"),
        notes=notes,
        refusal=bool(refusal),
    )


async def _read_stream(stream: Any, sink: TextSink, settings: Settings) -> Answer:
    """Accumulate a streamed chat completion into one Answer.

    A stream is whole once a chunk has given the choice's ``finish_reason``; one
    that ends before it was cut off (a proxy closing the connection cleanly,
    say), however finished its text looks.
    """
    text: list[str] = []
    refusal: list[str] = []
    reasoning: list[str] = []
    calls = ToolCallAccumulator()
    usage: dict[str, Any] | None = None
    model = ""
    finish: str | None = None
    chunks = 0
    async for chunk in stream:
        chunks += 1
        data = chunk.model_dump(warnings=False)
        model = data.get("model") or model
        usage = data.get("usage") or usage
        for choice in data.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or {}
            if piece := delta.get("reasoning_content") or delta.get("reasoning"):
                reasoning.append(piece)
            if piece := delta.get("content"):
                text.append(piece)
                sink(piece)
            if piece := delta.get("refusal"):
                refusal.append(piece)
                sink(piece)
            for call in delta.get("tool_calls") or []:
                fn = call.get("function") or {}
                calls.add(call.get("index"), call.get("id"), fn.get("name"), fn.get("arguments"))
    if not chunks:
        raise ProviderError(
            settings.name, f"{settings.where()} sent an empty stream; check base_url and model"
        )
    if finish is None:
        raise broken_stream(settings, "finish_reason")
    message = AssistantMessage(
        content="".join(text + refusal),
        tool_calls=calls.calls(),
        reasoning=_reasoning("".join(reasoning)),
    )
    checked, notes = _usage(usage)
    return make_answer(message, checked, model, finish, notes=notes, refusal=bool(refusal))


def _reasoning(text: str) -> tuple[ReasoningPart, ...]:
    return (ReasoningPart(kind="reasoning_content", text=text),) if text else ()


def _usage(usage: dict[str, Any] | None) -> tuple[Usage, list[str]]:
    """Usage from a chat completion's ``usage`` (DeepSeek's cache field included), and notes."""
    check = UsageCheck()
    if not usage:
        return Usage(), check.notes
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    cached = prompt_details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens")
    checked = check.usage(
        prompt=check("prompt_tokens", usage.get("prompt_tokens")),
        completion=check("completion_tokens", usage.get("completion_tokens")),
        cached=check("cached_tokens", cached),
        reasoning=check("reasoning_tokens", completion_details.get("reasoning_tokens")),
    )
    return checked, check.notes
