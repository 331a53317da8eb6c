"""The neutral message model shared by the engine, the providers and the store.

A model request is a system prompt, a list of ``ChatMessage`` and the tools on
offer; an answer is a ``ModelResponse``. Nothing here knows any SDK: each
provider maps these types to and from its wire format, and anything only one
provider needs (a thinking signature, an encrypted reasoning item) rides along
in ``provider_details`` or in a ``ReasoningPart``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A model's request to run one tool; ``arguments`` is the parsed JSON object.

    ``raw_arguments`` keeps the text as the model sent it when it was not valid
    JSON, so the tool loop can answer with an error result instead of guessing.
    """

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None
    provider_details: dict[str, Any] | None = None


def distinct_ids(calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    """``calls`` with an id of its own each: a call reusing an earlier call's id gets one.

    Two calls of one answer that share an id are two calls (a model or a proxy may
    number them alike): the second becomes ``<id>_2`` (the third ``<id>_3``, skipping
    any id the answer already uses). Made from the answer alone, so the same answer
    always gets the same ids: a replay rebuilds the same requests.
    """
    if len(calls) < 2:
        return calls
    taken = {call.id for call in calls}
    if len(taken) == len(calls):
        return calls
    seen: set[str] = set()
    out: list[ToolCall] = []
    for call in calls:
        if call.id in seen:
            base, n = call.id or "call", 2
            while f"{base}_{n}" in taken:
                n += 1
            call = call.model_copy(update={"id": f"{base}_{n}"})
            taken.add(call.id)
        seen.add(call.id)
        out.append(call)
    return tuple(out)


class ReasoningPart(_Frozen):
    """Thinking or reasoning a model produced; sent back unchanged, never shown to others.

    ``kind`` says whose format it is: Anthropic ``thinking`` (with ``signature``)
    and ``redacted_thinking`` (with opaque ``data``), OpenAI Responses
    ``reasoning`` (``data`` holds the encrypted content, ``id`` the item id) or
    ``reasoning_content`` (DeepSeek-style text on a chat completion).
    """

    kind: Literal["thinking", "redacted_thinking", "reasoning", "reasoning_content"]
    text: str = ""
    signature: str | None = None
    data: str | None = None
    id: str | None = None
    provider_details: dict[str, Any] | None = None


class ImagePart(_Frozen):
    """An image in a user message: its bytes (base64), media type and content hash.

    ``hash`` is ``sha256:<hex>`` of the bytes; the log refers to the image by it.
    """

    media_type: str
    data: str  # base64, as every wire format that takes inline images wants it
    hash: str


def _is_empty(value: object) -> bool:
    return not value


class UserMessage(_Frozen):
    role: Literal["user"] = "user"
    content: str
    # Left out of the JSON when empty, so that a message without images is written (and
    # digested, in a request's digest) as it was before messages could carry them.
    images: tuple[ImagePart, ...] = Field(default=(), exclude_if=_is_empty)


class AssistantMessage(_Frozen):
    """What a model said: text, tool calls and reasoning, in the model's order."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: tuple[ReasoningPart, ...] = ()
    provider: str | None = None  # the provider entry that produced it (reasoning is not portable)


class ToolResultMessage(_Frozen):
    """One tool's result, answering the call with ``tool_call_id``."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


ChatMessage = Annotated[
    UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")
]


class ToolSpec(_Frozen):
    """A tool as a model sees it: a name, a description and a JSON Schema of its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Usage(_Frozen):
    """Token counts of one call (or a sum of calls, with ``calls`` counting them)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    calls: int = 1

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            calls=self.calls + other.calls,
        )


class ReplyFormat(_Frozen):
    """The structured reply a request asks for: a JSON object following ``json_schema``.

    ``name`` is how the APIs that want one call the format (letters, digits, ``_`` and
    ``-``). ``strict`` asks OpenAI's APIs to hold the model to the schema exactly; they
    take it only for schemas whose every object lists all its properties as required and
    allows no others, so it is true just for those.
    """

    name: str
    json_schema: dict[str, Any]
    strict: bool = False


class ModelRequest(_Frozen):
    """Everything a provider needs for one call.

    ``reply_format``: the reply must be a JSON object following this schema (an
    agent's ``reply_format``); each backend asks its API for structured output.
    """

    system: str = ""
    messages: tuple[ChatMessage, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    node: str = ""  # who speaks; for logs and the scripted provider's errors
    reply_format: ReplyFormat | None = None


class ModelResponse(_Frozen):
    """A provider's answer: the assistant message, its usage and the model that gave it.

    ``finish_reason`` is the API's own word for why the answer ended (``stop``,
    ``end_turn``, ``length``, ...). ``cut`` says the answer did not end by itself
    (it reached the output token limit): its text is incomplete. ``refused``
    says the model declined or a content filter stopped it. ``notes`` are
    corrections roost made to what the provider reported (usage that cannot be
    right, say), for the record.
    """

    message: AssistantMessage
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    provider: str = ""  # the provider entry that answered (a fallback's name when one did)
    attempts: tuple[dict[str, Any], ...] = ()  # each attempt: provider, model, outcome
    finish_reason: str | None = None
    cut: bool = False
    refused: bool = False
    notes: tuple[str, ...] = ()
