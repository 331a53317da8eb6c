"""OpenAI Responses API, used statelessly.

Nothing is stored on OpenAI's side (``store: false``): every call sends the
whole conversation, the system prompt as ``instructions``, tool calls as
``function_call`` items followed by their ``function_call_output``, and the
reasoning items of earlier answers with their encrypted content (asked for
with ``include: ["reasoning.encrypted_content"]``) so reasoning models keep
their train of thought through a tool loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, assert_never

import openai

from roost.errors import ProviderError
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from roost.providers._common import Settings, TextSink, settings_from
from roost.providers._errors import broken_stream, stream_error
from roost.providers._history import OwnReasoning, paired, result_text
from roost.providers._http import Answer, HttpProvider, decode_answer, make_answer
from roost.providers._toolcalls import arguments_text, make_call
from roost.providers._usage import UsageCheck
from roost.providers.openai_chat import openai_client

if TYPE_CHECKING:
    from roost.providers.base import ProviderContext


def create(name: str, config: Any, context: ProviderContext) -> OpenAIResponsesProvider:
    """A Responses API provider for the flow's entry ``name``."""
    return OpenAIResponsesProvider(settings_from(name, config, context, key_env="OPENAI_API_KEY"))


class OpenAIResponsesProvider(HttpProvider[openai.AsyncOpenAI]):
    """``kind: openai-responses``: the Responses API, stateless."""

    sdk = openai

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai_client(self.settings, self._hooks)

    async def _attempt(self, request: ModelRequest, sink: TextSink) -> Answer:
        body = _to_wire(request, self.settings)
        result: Any = await self.client().responses.create(**body)
        return await decode_answer(result, sink, self.settings, _from_wire, _read_stream)


# --------------------------------------------------------------------------- to the wire


def _to_wire(request: ModelRequest, settings: Settings) -> dict[str, Any]:
    """The keyword arguments of ``responses.create`` for ``request``."""
    body: dict[str, Any] = {
        "model": settings.model,
        "input": _items(request, settings.name),
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": settings.stream,
    }
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in request.tools
        ]
    if request.reply_format is not None:
        reply_format = request.reply_format
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": reply_format.name,
                "schema": reply_format.json_schema,
                "strict": reply_format.strict,
            }
        }
    if settings.max_tokens:
        body["max_output_tokens"] = settings.max_tokens
    if settings.reasoning_effort:
        body["reasoning"] = {"effort": settings.reasoning_effort, "summary": "auto"}
    if settings.openai_temperature is not None:
        body["temperature"] = settings.openai_temperature
    return body


def _items(request: ModelRequest, name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    own = OwnReasoning(name)
    for message in paired(request.messages, name):
        match message:
            case UserMessage():
                items.append({"type": "message", "role": "user", "content": _user_content(message)})
            case AssistantMessage():
                items += _assistant_items(message, own.parts(message))
            case ToolResultMessage():
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": message.tool_call_id,
                        "output": result_text(message),
                    }
                )
            case _:
                assert_never(message)
    return items


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    """A user message's text, or its text and images as input parts (images as data URLs)."""
    if not message.images:
        return message.content
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "input_text", "text": message.content})
    for image in message.images:
        url = f"data:{image.media_type};base64,{image.data}"
        parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return parts


def _assistant_items(
    message: AssistantMessage, reasoning: tuple[ReasoningPart, ...]
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for part in reasoning:
        match part.kind:
            case "reasoning":
                items.append(_reasoning_item(part))
            case "thinking" | "redacted_thinking" | "reasoning_content":
                pass  # another API's format: this one could not read it
            case _:
                assert_never(part.kind)
    if message.content:
        items.append({"type": "message", "role": "assistant", "content": message.content})
    items += [_call_item(call) for call in message.tool_calls]
    return items


def _reasoning_item(part: ReasoningPart) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
        "encrypted_content": part.data,
    }
    if part.id:
        item["id"] = part.id
    return item


def _call_item(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": arguments_text(call),
    }


# --------------------------------------------------------------------------- from the wire


def _from_wire(data: dict[str, Any], settings: Settings) -> Answer:
    """An Answer from a whole response object.

    Its finish reason is its status, ``completed``, or for an ``incomplete``
    response the reason given (``max_output_tokens``, ``content_filter``).
    """
    status = data.get("status")
    if status == "failed":
        error = data.get("error") or {}
        raise stream_error(settings, str(error.get("message") or "failed"), str(error.get("code")))
    if not isinstance(data.get("output"), list):  # an error body, or another API's answer
        raise ProviderError(settings.name, f"{settings.where()} answered with no output")
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    refusal = False
    for item in data.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                refusal = refusal or part.get("type") == "refusal"
                text.append(part.get("text") or part.get("refusal") or "")
        elif kind == "function_call":
            details = {"id": item["id"]} if item.get("id") else None
            calls.append(
                make_call(
                    item.get("call_id") or "",
                    item.get("name") or "",
                    item.get("arguments") or "",
                    details,
                )
            )
        elif kind == "reasoning":
            reasoning.append(_reasoning_part(item))
        else:
            raise ProviderError(
                settings.name, f"the answer holds a {kind!r} item, which roost cannot use"
            )
    message = AssistantMessage(
        content="".join(text), tool_calls=tuple(calls), reasoning=tuple(reasoning)
    )
    usage, notes = _usage(data.get("usage"))
    model = data.get("model") or ""
    return make_answer(message, usage, model, _finish(data), notes=notes, refusal=refusal)


def _finish(data: dict[str, Any]) -> str | None:
    status = data.get("status")
    if status == "incomplete":
        return str((data.get("incomplete_details") or {}).get("reason") or status)
    return str(status) if status else None


def _reasoning_part(item: dict[str, Any]) -> ReasoningPart:
    summary = "".join(s.get("text") or "" for s in item.get("summary") or [])
    return ReasoningPart(
        kind="reasoning", text=summary, data=item.get("encrypted_content"), id=item.get("id")
    )


# The events that end a Responses stream, each with the whole response.
FINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


async def _read_stream(stream: Any, sink: TextSink, settings: Settings) -> Answer:
    """Accumulate a Responses event stream into one Answer.

    Only a final event (completed, incomplete or failed) makes it whole: a
    stream that ends before one was cut off, whatever text it had sent.
    """
    done_items: list[dict[str, Any]] = []
    final: dict[str, Any] | None = None
    async for event in stream:
        data = event.model_dump(warnings=False)
        kind = data.get("type")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            sink(data.get("delta") or "")
        elif kind == "response.output_item.done":
            done_items.append(data.get("item") or {})
        elif kind in FINAL_EVENTS:
            final = data.get("response") or {}
        elif kind == "error":
            message = str(data.get("message") or "error event")
            raise stream_error(settings, message, str(data.get("code") or ""))
    if final is None:
        raise broken_stream(settings, "response.completed")
    if not final.get("output"):
        final = {**final, "output": done_items}
    return _from_wire(final, settings)


def _usage(usage: dict[str, Any] | None) -> tuple[Usage, list[str]]:
    """Usage from a response's ``usage``, and notes on what had to be corrected."""
    check = UsageCheck()
    if not usage:
        return Usage(), check.notes
    input_details = usage.get("input_tokens_details") or {}
    output_details = usage.get("output_tokens_details") or {}
    checked = check.usage(
        prompt=check("input_tokens", usage.get("input_tokens")),
        completion=check("output_tokens", usage.get("output_tokens")),
        cached=check("cached_tokens", input_details.get("cached_tokens")),
        reasoning=check("reasoning_tokens", output_details.get("reasoning_tokens")),
    )
    return checked, check.notes
