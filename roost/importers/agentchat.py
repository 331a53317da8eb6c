"""AutoGen AgentChat: a ``TaskResult`` dumped as JSON, or a team's ``save_state()``.

A TaskResult's ``messages`` hold each message with its ``source``, its
``models_usage`` and ``created_at``; ``SelectSpeakerEvent`` says whom a
selector chose; ``UserInputRequestedEvent`` marks the next message of its
source as a person's answer. A team state holds the same messages in its
manager's ``message_thread``.
"""

from __future__ import annotations

from typing import Any

from roost.importers.common import (
    TurnBuilder,
    arguments_of,
    expect_list,
    expect_object,
    text_of,
    usage_of,
)
from roost.importers.model import Conversation, ImportFormatError, ToolCall

# Messages that are a speaker's reply, by type.
SAID = (
    "TextMessage",
    "ToolCallSummaryMessage",
    "HandoffMessage",
    "StopMessage",
    "MultiModalMessage",
    "StructuredMessage",
)
# Events that say nothing a roost run records.
QUIET = (
    "ThoughtEvent",
    "ModelClientStreamingChunkEvent",
    "MemoryQueryEvent",
    "CodeGenerationEvent",
    "CodeExecutionEvent",
    "UserInputRequestedEvent",
    "SelectorEvent",
)


def read(data: Any, file: str) -> Conversation:
    """The conversation of a TaskResult or of a team state."""
    top = expect_object(data, file, "a TaskResult or a team state (a JSON object)")
    if top.get("type") == "TeamState":
        messages, kind = _thread(top, file), "save_state"
    elif "messages" in top:
        messages, kind = top["messages"], "TaskResult"
    else:
        raise ImportFormatError(f"{file}: neither a TaskResult (no 'messages') nor a TeamState")
    talk = Conversation([], source={"format": "agentchat", "file": file, "shape": kind})
    talk.turns = _turns(expect_list(messages, file, "a list of messages"), file, talk)
    talk.notes.append("system messages: AgentChat does not record them; the agents have no role")
    talk.notes.append("models: AgentChat does not record which model answered")
    return talk


def _thread(state: dict[str, Any], file: str) -> Any:
    agents = expect_object(state.get("agent_states"), file, "agent_states (an object)")
    for agent in agents.values():
        if isinstance(agent, dict) and "message_thread" in agent:
            return agent["message_thread"]
    raise ImportFormatError(f"{file}: the team state has no manager's message_thread")


def _turns(messages: list[Any], file: str, talk: Conversation) -> list[Any]:
    build = TurnBuilder(talk.notes)
    asked: set[str] = set()  # sources a person is answering for
    for n, raw in enumerate(messages):
        where = f"{file}: message {n}"
        item = expect_object(raw, where, "a message (an object)")
        kind, source = item.get("type"), str(item.get("source", ""))
        usage = usage_of(item.get("models_usage"))
        if kind == "UserInputRequestedEvent":
            asked.add(source)
        if kind == "SelectSpeakerEvent":
            talk.chosen_by = "recorded"
        elif kind == "ToolCallRequestEvent":
            calls = [_call(c, where) for c in expect_list(item.get("content"), where, "calls")]
            build.tool_round(source, calls, usage=usage)
        elif kind == "ToolCallExecutionEvent":
            results = [
                _result(r, where) for r in expect_list(item.get("content"), where, "results")
            ]
            build.results(where, results)
        elif kind in SAID:
            human = source in asked
            asked.discard(source)
            build.say(
                source,
                text_of(item.get("content")),
                usage=usage,
                ts=item.get("created_at"),
                human=human,
            )
        elif kind not in QUIET:
            raise ImportFormatError(f"{where}: unknown message type {kind!r}")
    return build.done()


def _call(raw: Any, where: str) -> ToolCall:
    call = expect_object(raw, where, "a function call")
    return ToolCall(str(call.get("id")), str(call.get("name")), arguments_of(call.get("arguments")))


def _result(raw: Any, where: str) -> tuple[str, str, bool]:
    result = expect_object(raw, where, "a function result")
    return str(result.get("call_id")), text_of(result.get("content")), bool(result.get("is_error"))
