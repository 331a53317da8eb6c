"""Putting a neutral history in the order every tool-calling API insists on.

Each API wants every tool call of an assistant message answered right after
it, one result per call, in the order of the calls. ``paired`` gives that
order, fills a call left without a result (a run stopped mid-loop) with an
error result saying so, and refuses a result that answers no call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, assert_never

from roost.errors import ProviderError
from roost.messages import (
    AssistantMessage,
    ChatMessage,
    ReasoningPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from roost.providers._common import OWNER

if TYPE_CHECKING:
    from collections.abc import Sequence

MISSING_RESULT = "no result was recorded for this call (the run stopped before it finished)"


def paired(messages: Sequence[ChatMessage], provider: str) -> list[ChatMessage]:
    """``messages`` with each assistant's tool results right after it, in call order."""
    out: list[ChatMessage] = []
    pending: list[ToolCall] = []
    results: dict[str, ToolResultMessage] = {}

    def flush() -> None:
        for call in pending:
            result = results.pop(call.id, None)
            out.append(result if result is not None else _missing(call))
        pending.clear()
        results.clear()

    for message in messages:
        match message:
            case ToolResultMessage():
                if message.tool_call_id not in {call.id for call in pending}:
                    raise ProviderError(
                        provider,
                        f"tool result {message.tool_call_id!r} ({message.name}) answers no "
                        "tool call of the assistant message before it",
                    )
                results.setdefault(message.tool_call_id, message)
            case AssistantMessage():
                flush()
                out.append(message)
                pending = list(message.tool_calls)
            case UserMessage():
                flush()
                out.append(message)
            case _:
                assert_never(message)
    flush()
    return out


def _missing(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id, name=call.name, content=MISSING_RESULT, is_error=True
    )


@dataclass(frozen=True)
class OwnReasoning:
    """Decides which reasoning parts go back to the provider ``name``."""

    name: str

    def parts(self, message: AssistantMessage) -> tuple[ReasoningPart, ...]:
        """The message's reasoning when this provider produced it, else nothing.

        Reasoning is not portable: another provider could not read it, and
        would refuse a signature it did not make. Each part names its maker in
        ``provider_details`` (a fallback may have produced it); a part without
        that mark belongs to the message's provider.
        """
        return tuple(part for part in message.reasoning if _owner(part, message) == self.name)


def _owner(part: ReasoningPart, message: AssistantMessage) -> str | None:
    details = part.provider_details or {}
    owner = details.get(OWNER)
    return owner if isinstance(owner, str) else message.provider


def current_loop_start(messages: Sequence[ChatMessage]) -> int:
    """Index of the first message after the last user message: the running tool loop."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], UserMessage):
            return index + 1
    return 0


def result_text(message: ToolResultMessage) -> str:
    """A tool result's text for APIs with no error flag: errors say so in words."""
    if message.is_error and not message.content.lower().startswith("error"):
        return f"Error: {message.content}"
    return message.content
