"""AG2: a JSON list of messages, as ``GroupChat.messages`` or a chat's ``chat_history``.

Each message has ``content``, ``role`` and usually ``name`` (the speaker);
a model's tool request has ``tool_calls`` (and AG2 leaves its ``name`` out),
the executor's answer ``tool_responses``. ``role: system`` entries are the
speakers' system messages when a list holds them.
"""

from __future__ import annotations

from typing import Any

from roost.importers.common import TurnBuilder, arguments_of, expect_list, expect_object, text_of
from roost.importers.model import Conversation, ImportFormatError, ToolCall


def read(data: Any, file: str) -> Conversation:
    """The conversation of an AG2 message list."""
    messages = expect_list(data, file, "a JSON list of AG2 messages")
    items = [
        expect_object(m, f"{file}: message {n}", "a message (an object)")
        for n, m in enumerate(messages)
    ]
    talk = Conversation([], source={"format": "ag2", "file": file})
    build = TurnBuilder(talk.notes)
    for n, item in enumerate(items):
        where = f"{file}: message {n}"
        if "role" not in item and "content" not in item:
            raise ImportFormatError(f"{where}: not an AG2 message (no 'role' or 'content')")
        if item.get("role") == "system":
            talk.roles[str(item.get("name", ""))] = text_of(item.get("content"))
        elif item.get("tool_calls"):
            speaker = item.get("name") or _caller(items, n, where)
            build.tool_round(str(speaker), [tool_call(c, where) for c in item["tool_calls"]])
        elif item.get("tool_responses") or item.get("role") in ("tool", "function"):
            build.results(where, tool_results(item, where))
        else:
            build.say(str(item.get("name", "")), text_of(item.get("content")))
    talk.turns = build.done()
    _notes(talk)
    return talk


def _caller(items: list[dict[str, Any]], n: int, where: str) -> str:
    """The speaker of an unnamed tool request: who speaks next, not as a tool's executor."""
    for item in items[n + 1 :]:
        executor = item.get("role") in ("tool", "function") or item.get("tool_responses")
        if item.get("name") and not executor:
            return str(item["name"])
    raise ImportFormatError(f"{where}: a tool request with no 'name' and no reply after it")


def tool_call(raw: Any, where: str) -> ToolCall:
    call = expect_object(raw, where, "a tool call")
    function = expect_object(call.get("function", {}), where, "a tool call's function")
    return ToolCall(
        str(call.get("id")), str(function.get("name")), arguments_of(function.get("arguments"))
    )


def tool_results(item: dict[str, Any], where: str) -> list[tuple[str, str, bool]]:
    responses = item.get("tool_responses") or [item]
    out = []
    for raw in expect_list(responses, where, "tool_responses (a list)"):
        response = expect_object(raw, where, "a tool response")
        content = text_of(response.get("content"))
        call_id = response.get("tool_call_id") or response.get("name")
        # AG2 records a failing tool as its content, "Error: ...", and nothing else.
        out.append((str(call_id), content, content.startswith("Error: ")))
    return out


def _notes(talk: Conversation) -> None:
    missing = [s for s in talk.speakers if s not in talk.roles]
    if missing:
        talk.notes.append(f"system messages: not in the file for {', '.join(missing)}; no role")
    talk.notes.append("models, usage and times: AG2 messages do not record them")
    talk.notes.append("speaker order: recorded as who spoke; how each was chosen is not")
