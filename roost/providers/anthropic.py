"""Anthropic Messages API.

The system prompt goes in the ``system`` parameter; every ``tool_use`` is
answered by a ``tool_result`` block in the very next user message; thinking
blocks (with their signatures) and redacted thinking blocks are sent back
unchanged to the provider that made them. ``max_tokens`` defaults to 8192,
and with thinking on no temperature is sent (the API refuses one).

A reply format goes in ``output_config.format`` (structured outputs, the home
of the beta ``output_format``); a model older than structured outputs gets a
tool whose input is the reply instead, forced when thinking allows it, and its
call comes back as the reply's text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, assert_never

import anthropic

from roost.errors import ProviderError
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningPart,
    ReplyFormat,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from roost.providers._common import (
    ANTHROPIC_DEFAULT_MAX_TOKENS,
    Settings,
    TextSink,
    require_key,
    settings_from,
)
from roost.providers._errors import broken_stream
from roost.providers._history import OwnReasoning, paired
from roost.providers._http import Answer, HttpProvider, decode_answer, make_answer
from roost.providers._toolcalls import make_call
from roost.providers._usage import UsageCheck

if TYPE_CHECKING:
    from roost.providers.base import ProviderContext

EMPTY_TURN = "(no answer)"  # the API refuses an assistant turn without content
PAUSE_TURN = "pause_turn"
MAX_PAUSES = 8  # continuations of one paused turn before roost keeps what it has
# Claude models from before structured outputs (Claude 2 and 3, Sonnet 4, Opus 4 and 4.1):
# they are asked for a reply format through a tool. Any other model name, a newer Claude
# or a model behind an Anthropic-compatible server, is sent ``output_config.format``.
_BEFORE_OUTPUT_FORMAT = re.compile(
    r"claude-(?:instant|2|3)(?![0-9])|claude-(?:opus|sonnet)-4(?:-[01])?(?:-[0-9]{8})?(?:@.*)?$"
)
REPLY_TOOL_NOTE = "Give your reply by calling this tool: its input is your whole reply."


def uses_reply_tool(model: str) -> bool:
    """Whether ``model`` lacks structured outputs, so a reply format goes through a tool."""
    return _BEFORE_OUTPUT_FORMAT.match(model.removeprefix("anthropic.")) is not None


def create(name: str, config: Any, context: ProviderContext) -> AnthropicProvider:
    """An Anthropic Messages provider for the flow's entry ``name``."""
    return AnthropicProvider(settings_from(name, config, context, key_env="ANTHROPIC_API_KEY"))


class AnthropicProvider(HttpProvider[anthropic.AsyncAnthropic]):
    """``kind: anthropic``: the Messages API."""

    sdk = anthropic

    def _new_client(self) -> anthropic.AsyncAnthropic:
        http_client = anthropic.DefaultAsyncHttpxClient(**self._hooks.client_options())
        return anthropic.AsyncAnthropic(
            api_key=require_key(self.settings),
            base_url=self.settings.base_url,
            timeout=self.settings.timeout,
            max_retries=self.settings.max_retries,
            http_client=http_client,
        )

    async def _attempt(self, request: ModelRequest, sink: TextSink) -> Answer:
        """One answer; a turn the server paused (``pause_turn``) is sent back to go on.

        The API pauses a long turn and expects the paused answer back, as the
        last assistant turn, to continue it; the parts join into one answer.
        After ``MAX_PAUSES`` continuations the answer so far is kept, as cut.
        """
        body = _to_wire(request, self.settings)
        reply_tool = _reply_tool(request, self.settings)
        sink.reply_tool = reply_tool
        parts: list[Answer] = []
        while True:
            result: Any = await self.client().messages.create(**body)
            answer = await decode_answer(result, sink, self.settings, _from_wire, _read_stream)
            parts.append(answer)
            if answer.finish_reason != PAUSE_TURN or len(parts) > MAX_PAUSES:
                joined = _joined(parts)
                return _reply_of_tool(joined, reply_tool) if reply_tool else joined
            turns = [*body["messages"]]
            _add(turns, "assistant", _assistant_blocks(answer.message, answer.message.reasoning))
            body = {**body, "messages": turns}


# --------------------------------------------------------------------------- to the wire


def _to_wire(request: ModelRequest, settings: Settings) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request``."""
    max_tokens = settings.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {
        "model": settings.model,
        "messages": _messages(request, settings.name),
        "stream": settings.stream,
    }
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    if settings.thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
        if settings.max_tokens is None and max_tokens <= settings.thinking_budget:
            max_tokens = settings.thinking_budget + ANTHROPIC_DEFAULT_MAX_TOKENS
    elif settings.temperature is not None:
        # The SDK no longer lists temperature among its arguments; the API still takes it.
        body["extra_body"] = {"temperature": settings.temperature}
    body["max_tokens"] = max_tokens
    if request.reply_format is not None:
        _ask_format(body, request.reply_format, settings, bool(request.tools))
    return body


def _reply_tool(request: ModelRequest, settings: Settings) -> str | None:
    """The name of the tool that carries the reply, when the model is asked through one."""
    reply_format = request.reply_format
    if reply_format is None or not uses_reply_tool(settings.model):
        return None
    return reply_format.name


def _ask_format(
    body: dict[str, Any], reply_format: ReplyFormat, settings: Settings, has_tools: bool
) -> None:
    """Asks for a reply following ``reply_format``: structured outputs, else a reply tool."""
    if not uses_reply_tool(settings.model):
        body["output_config"] = {
            "format": {"type": "json_schema", "schema": reply_format.json_schema}
        }
        return
    tool = {
        "name": reply_format.name,
        "description": REPLY_TOOL_NOTE,
        "input_schema": reply_format.json_schema,
    }
    body["tools"] = [*body.get("tools", ()), tool]
    if settings.thinking_budget:
        return  # the API forces no tool while thinking: the reply is checked all the same
    # With tools of its own the model may call those first: any tool, the reply's included.
    forced = {"type": "any"} if has_tools else {"type": "tool", "name": reply_format.name}
    body["tool_choice"] = forced


def _reply_of_tool(answer: Answer, reply_tool: str) -> Answer:
    """The answer with the reply tool's call as its text; other calls go first, to be run."""
    calls = answer.message.tool_calls
    carried = [call for call in calls if call.name == reply_tool]
    if not carried:
        return answer
    others = tuple(call for call in calls if call.name != reply_tool)
    if others:  # the reply comes after those calls' results
        return replace(answer, message=answer.message.model_copy(update={"tool_calls": others}))
    call = carried[0]
    text = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    message = answer.message.model_copy(update={"content": text, "tool_calls": ()})
    return replace(answer, message=message)


def _messages(request: ModelRequest, name: str) -> list[dict[str, Any]]:
    """Turns of alternating roles; tool results open the user turn after the tool calls."""
    turns: list[dict[str, Any]] = []
    own = OwnReasoning(name)
    for message in paired(request.messages, name):
        match message:
            case UserMessage():
                _add(turns, "user", _user_blocks(message))
            case AssistantMessage():
                _add(turns, "assistant", _assistant_blocks(message, own.parts(message)))
            case ToolResultMessage():
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id,
                    "content": message.content,
                }
                if message.is_error:
                    block["is_error"] = True
                _add(turns, "user", [block])
            case _:
                assert_never(message)
    return turns


def _user_blocks(message: UserMessage) -> list[dict[str, Any]]:
    """A user message's images (base64 sources, first, as Anthropic advises) and its text."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
        }
        for image in message.images
    ]
    if message.content or not blocks:
        blocks.append({"type": "text", "text": message.content})
    return blocks


def _add(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _assistant_blocks(
    message: AssistantMessage, reasoning: tuple[ReasoningPart, ...]
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in reasoning:
        match part.kind:
            case "thinking":
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}
                )
            case "redacted_thinking":
                blocks.append({"type": "redacted_thinking", "data": part.data or ""})
            case "reasoning" | "reasoning_content":
                pass  # another API's format: this one could not read it
            case _:
                assert_never(part.kind)
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks += [_tool_use(call) for call in message.tool_calls]
    return blocks or [{"type": "text", "text": EMPTY_TURN}]


def _tool_use(call: ToolCall) -> dict[str, Any]:
    # Arguments that were not a JSON object are sent as {}: ``input`` must be one.
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}


# --------------------------------------------------------------------------- from the wire


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)


def _from_wire(data: dict[str, Any], settings: Settings) -> Answer:
    """An Answer from a whole (non-streamed) message."""
    if not isinstance(data.get("content"), list):  # an error body, or another API's answer
        raise ProviderError(settings.name, f"{settings.where()} answered with no content")
    blocks = [_block_of(raw) for raw in data["content"]]
    usage = data.get("usage") or {}
    return _answer(blocks, usage, data.get("model") or "", data.get("stop_reason"), settings)


def _block_of(raw: dict[str, Any]) -> _Block:
    block = _Block(kind=str(raw.get("type")))
    block.text = [raw.get("text") or raw.get("thinking") or ""]
    block.signature = raw.get("signature") or ""
    block.data = raw.get("data") or ""
    block.id = raw.get("id") or ""
    block.name = raw.get("name") or ""
    block.input = raw.get("input") or {}
    return block


def _answer(
    blocks: list[_Block],
    usage: dict[str, Any],
    model: str,
    stop_reason: str | None,
    settings: Settings,
) -> Answer:
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    for block in blocks:
        joined = "".join(block.text)
        if block.kind == "text":
            text.append(joined)
        elif block.kind == "thinking":
            reasoning.append(ReasoningPart(kind="thinking", text=joined, signature=block.signature))
        elif block.kind == "redacted_thinking":
            reasoning.append(ReasoningPart(kind="redacted_thinking", data=block.data))
        elif block.kind == "tool_use":
            arguments = joined if block.text and any(block.text) else json.dumps(block.input)
            calls.append(make_call(block.id, block.name, arguments))
        else:
            raise ProviderError(
                settings.name, f"the answer holds a {block.kind!r} block, which roost cannot use"
            )
    message = AssistantMessage(
        content="".join(text), tool_calls=tuple(calls), reasoning=tuple(reasoning)
    )
    checked, notes = _usage(usage)
    return make_answer(message, checked, model, stop_reason, notes=notes)


def _joined(parts: list[Answer]) -> Answer:
    """The parts of a turn the server paused, as one answer ending as the last one did."""
    if len(parts) == 1:
        return parts[0]
    last = parts[-1]
    message = AssistantMessage(
        content="".join(p.message.content for p in parts),
        tool_calls=tuple(c for p in parts for c in p.message.tool_calls),
        reasoning=tuple(r for p in parts for r in p.message.reasoning),
    )
    usage = parts[0].usage
    for part in parts[1:]:
        usage = usage + part.usage
    cut = last.cut or last.finish_reason == PAUSE_TURN  # still paused: roost stopped asking
    notes = tuple(n for p in parts for n in p.notes)
    return replace(last, message=message, usage=usage.model_copy(update={"calls": 1}),
                   cut=cut, notes=notes)  # fmt: skip


async def _read_stream(stream: Any, sink: TextSink, settings: Settings) -> Answer:
    """Accumulate a Messages event stream into one Answer.

    ``message_stop`` makes it whole: a stream that ends before it was cut off,
    whatever text it had sent.
    """
    blocks: list[_Block] = []
    by_index: dict[int, _Block] = {}
    usage: dict[str, Any] = {}
    model = ""
    stop_reason: str | None = None
    stopped = False
    async for event in stream:
        data = event.model_dump(warnings=False)
        kind = data.get("type")
        if kind == "message_start":
            message = data.get("message") or {}
            model = message.get("model") or model
            usage.update({k: v for k, v in (message.get("usage") or {}).items() if v is not None})
        elif kind == "content_block_start":
            block = _block_of(data.get("content_block") or {})
            if block.kind == "tool_use":
                block.text = []  # the input comes as JSON fragments
            blocks.append(block)
            by_index[data.get("index", len(blocks) - 1)] = block
        elif kind == "content_block_delta":
            _apply_delta(by_index.get(data.get("index", -1)), data.get("delta") or {}, sink)
        elif kind == "message_delta":
            stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
            usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            stopped = True
    if not stopped:
        raise broken_stream(settings, "message_stop")
    return _answer(blocks, usage, model, stop_reason, settings)


def _apply_delta(block: _Block | None, delta: dict[str, Any], sink: TextSink) -> None:
    if block is None:
        return
    kind = delta.get("type")
    if kind == "text_delta":
        block.text.append(delta.get("text") or "")
        sink(delta.get("text") or "")
    elif kind == "thinking_delta":
        block.text.append(delta.get("thinking") or "")
    elif kind == "signature_delta":
        block.signature += delta.get("signature") or ""
    elif kind == "input_json_delta":
        piece = delta.get("partial_json") or ""
        block.text.append(piece)
        if block.name and block.name == sink.reply_tool:
            sink(piece)  # the reply itself, carried by a tool: shown as it comes


def _usage(usage: dict[str, Any]) -> tuple[Usage, list[str]]:
    """Usage from a message's ``usage`` (the prompt counts cached and cache-written tokens)."""
    check = UsageCheck()
    cached = check("cache_read_input_tokens", usage.get("cache_read_input_tokens"))
    written = check("cache_creation_input_tokens", usage.get("cache_creation_input_tokens"))
    details = usage.get("output_tokens_details") or {}
    checked = check.usage(
        prompt=check("input_tokens", usage.get("input_tokens")) + cached + written,
        completion=check("output_tokens", usage.get("output_tokens")),
        cached=cached,
        reasoning=check("thinking_tokens", details.get("thinking_tokens")),
    )
    return checked, check.notes
