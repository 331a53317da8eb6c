"""Rendering a scripted Reply in each API's exact wire format, JSON or SSE.

The event sequences follow what the real services send (and the SDKs'
own recorded fixtures): Chat Completions chunks ending with a usage chunk and
``[DONE]``; Responses ``response.*`` events from ``response.created`` to
``response.completed``; Anthropic ``message_start``, content block events,
``ping``, ``message_delta`` and ``message_stop``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from fakes.script import FakeCall

if TYPE_CHECKING:
    from fakes.script import Reply, Status, Thinking

Api = Literal["chat", "responses", "anthropic"]
Event = tuple[str | None, str]  # (event name, data)


def api_of(path: str) -> Api | None:
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "anthropic"
    return None


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def call_id(call: FakeCall, n: int, api: Api) -> str:
    return call.id or (f"toolu_{n:02d}" if api == "anthropic" else f"call_{n:02d}")


# --------------------------------------------------------------------------- errors


def status_body(api: Api, status: Status) -> str:
    if status.body is not None:
        return status.body
    error: dict[str, Any]
    if api == "anthropic":
        error = {"type": status.error_type, "message": status.message}
        return json.dumps({"type": "error", "error": error})
    error = {
        "message": status.message,
        "type": status.error_type,
        "param": None,
        "code": status.code,
    }
    return json.dumps({"error": error})


_TOKEN = re.compile(r"\w+|[^\w\s]")
_NOT_TEXT = frozenset({"model", "role", "type", "id", "call_id", "tool_call_id", "signature"})


def prompt_tokens(body: dict[str, Any]) -> int:
    """The request's size as the fake model counts it: words and punctuation marks of every
    text it is sent (system prompt, messages, tool calls and results, tools), plus 4 a message.

    Not any real tokenizer, on purpose: roost must learn the ratio from reported usage.
    """
    texts: list[str] = []
    messages = 0

    def walk(value: object, key: str = "") -> None:
        nonlocal messages
        if isinstance(value, str):
            if key not in _NOT_TEXT:
                texts.append(value)
        elif isinstance(value, dict):
            if "role" in value or value.get("type") in ("function_call", "function_call_output"):
                messages += 1
            for name, item in value.items():
                walk(item, name)
        elif isinstance(value, list):
            for item in value:
                walk(item, key)

    for key in ("system", "instructions", "messages", "input", "tools"):
        walk(body.get(key), key)
    return sum(len(_TOKEN.findall(text)) for text in texts) + 4 * messages


def error_event(api: Api, error_type: str, message: str = "stream failed") -> Event:
    data: dict[str, Any]
    if api == "anthropic":
        data = {"type": "error", "error": {"type": error_type, "message": message}}
        return "error", json.dumps(data)
    if api == "responses":
        data = {"type": "error", "code": error_type, "message": message, "sequence_number": 99}
        return "error", json.dumps(data)
    return None, json.dumps({"error": {"message": message, "type": error_type, "code": None}})


# --------------------------------------------------------------------------- chat


def chat_json(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.refusal:
        message["refusal"] = reply.refusal
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": call_id(c, n, "chat"),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_text()},
            }
            for n, c in enumerate(reply.calls)
        ]
    if reply.thinking:
        message["reasoning_content"] = "".join(t.text for t in reply.thinking)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
        "usage": chat_usage(reply),
    }


def chat_usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    return {
        "prompt_tokens": u.prompt,
        "completion_tokens": u.completion,
        "total_tokens": u.prompt + u.completion,
        "prompt_tokens_details": {"cached_tokens": u.cached},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
    }


def _finish(reply: Reply) -> str:
    if reply.finish is not None:
        return reply.finish
    return "tool_calls" if reply.calls else "stop"


def chat_events(reply: Reply, model: str) -> list[Event]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return None, json.dumps({**base, "model": model, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    for t in reply.thinking:
        events += [chunk({"reasoning_content": p}) for p in pieces(t.text, reply.chunk_size)]
    events += [chunk({"content": p}) for p in pieces(reply.text, reply.chunk_size)]
    events += [chunk({"refusal": p}) for p in pieces(reply.refusal, reply.chunk_size)]
    for n, c in enumerate(reply.calls):
        events += [chunk({"tool_calls": [d]}) for d in _chat_call_deltas(reply, c, n)]
    events.append(chunk({}, _finish(reply)))
    usage = {**base, "model": model, "choices": [], "usage": chat_usage(reply)}
    events += [(None, json.dumps(usage)), (None, "[DONE]")]
    return events


def _chat_call_deltas(reply: Reply, call: FakeCall, n: int) -> list[dict[str, Any]]:
    index = 0 if reply.reuse_index else n
    ident = {"id": call_id(call, n, "chat"), "type": "function"}
    names = pieces(call.name, reply.chunk_size) if reply.split_names else [call.name]
    first = {"index": index, **ident, "function": {"name": names[0], "arguments": ""}}
    deltas: list[dict[str, Any]] = [first]
    # The rest of a name split across fragments, as some compatible servers send it.
    deltas += [{"index": index, "function": {"name": rest}} for rest in names[1:]]
    fragments = pieces(call.arguments_text(), reply.chunk_size)
    if reply.repeat_arguments:
        fragments.append(call.arguments_text())
    for fragment in fragments:
        delta: dict[str, Any] = {"index": index, "function": {"arguments": fragment}}
        if reply.repeat_ids:
            delta.update(ident)
            delta["function"]["name"] = call.name
        deltas.append(delta)
    return deltas


# --------------------------------------------------------------------------- responses


def responses_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for n, t in enumerate(reply.thinking):
        summary = [{"type": "summary_text", "text": t.text}] if t.text else []
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_{n:02d}",
                "summary": summary,
                "encrypted_content": t.signature,
            }
        )
    if reply.text or reply.refusal:
        content: list[dict[str, Any]] = []
        if reply.text:
            text = {"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}
            content.append(text)
        if reply.refusal:
            content.append({"type": "refusal", "refusal": reply.refusal})
        items.append(
            {
                "type": "message",
                "id": "msg_00",
                "role": "assistant",
                "status": "completed",
                "content": content,
            }
        )
    for n, c in enumerate(reply.calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{n:02d}",
                "call_id": call_id(c, n, "responses"),
                "name": c.name,
                "arguments": c.arguments_text(),
                "status": "completed",
            }
        )
    return items


def responses_status(reply: Reply) -> str:
    """``completed``, or ``incomplete`` when the reply names another finish."""
    return "completed" if reply.finish in (None, "completed") else "incomplete"


def responses_json(reply: Reply, model: str, status: str | None = None) -> dict[str, Any]:
    u = reply.usage
    status = status or responses_status(reply)
    finished = status in ("completed", "incomplete")
    incomplete = {"reason": reply.finish} if status == "incomplete" else None
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": 1700000000,
        "status": status,
        "incomplete_details": incomplete,
        "model": model,
        "output": responses_items(reply) if finished else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": u.prompt,
            "input_tokens_details": {"cached_tokens": u.cached, "cache_write_tokens": 0},
            "output_tokens": u.completion,
            "output_tokens_details": {"reasoning_tokens": u.reasoning},
            "total_tokens": u.prompt + u.completion,
        },
    }


def responses_events(reply: Reply, model: str) -> list[Event]:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": responses_json(reply, model, "in_progress")},
        {"type": "response.in_progress", "response": responses_json(reply, model, "in_progress")},
    ]
    for index, item in enumerate(responses_items(reply)):
        events += _item_events(reply, index, item)
    final = responses_json(reply, model)
    events.append({"type": f"response.{final['status']}", "response": final})
    return [(e["type"], json.dumps({**e, "sequence_number": n})) for n, e in enumerate(events)]


def responses_failed(reply: Reply, model: str, error_type: str) -> Event:
    response = {**responses_json(reply, model, "failed"), "output": []}
    response["error"] = {"code": error_type, "message": "the model failed"}
    data = {"type": "response.failed", "sequence_number": 98, "response": response}
    return "response.failed", json.dumps(data)


def _item_events(reply: Reply, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    ref = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "message":
        empty = {**item, "status": "in_progress", "content": []}
        events: list[dict[str, Any]] = [
            {"type": "response.output_item.added", "output_index": index, "item": empty}
        ]
        for content_index, part in enumerate(item["content"]):
            events += _part_events(reply, ref, content_index, part)
    elif item["type"] == "function_call":
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "arguments": "", "status": "in_progress"},
            }
        ]
        for p in pieces(item["arguments"], reply.chunk_size):
            events.append({"type": "response.function_call_arguments.delta", **ref, "delta": p})
        events.append(
            {
                "type": "response.function_call_arguments.done",
                **ref,
                "arguments": item["arguments"],
                "name": item["name"],
            }
        )
    else:
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "summary": [], "encrypted_content": None},
            }
        ]
    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def _part_events(
    reply: Reply, ref: dict[str, Any], content_index: int, part: dict[str, Any]
) -> list[dict[str, Any]]:
    """The events of one content part of a message: added, its deltas, done."""
    kind = part["type"]  # output_text or refusal
    field_name = "text" if kind == "output_text" else "refusal"
    name = "output_text" if kind == "output_text" else "refusal"
    at = {**ref, "content_index": content_index}
    empty = {**part, field_name: ""}
    extra: dict[str, Any] = {"logprobs": []} if kind == "output_text" else {}
    events: list[dict[str, Any]] = [{"type": "response.content_part.added", **at, "part": empty}]
    for p in pieces(part[field_name], reply.chunk_size):
        events.append({"type": f"response.{name}.delta", **at, "delta": p, **extra})
    events.append({"type": f"response.{name}.done", **at, field_name: part[field_name], **extra})
    events.append({"type": "response.content_part.done", **at, "part": part})
    return events


# --------------------------------------------------------------------------- anthropic


def anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [_thinking_block(t) for t in reply.thinking]
    # Anthropic has no refusal field: a refusal is text, with stop_reason "refusal".
    text = reply.text + reply.refusal
    if text:
        blocks.append({"type": "text", "text": text, "citations": None})
    for n, c in enumerate(reply.calls):
        arguments: Any = c.arguments if isinstance(c.arguments, dict) else {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call_id(c, n, "anthropic"),
                "name": c.name,
                "input": arguments,
            }
        )
    return blocks


def _thinking_block(t: Thinking) -> dict[str, Any]:
    if t.redacted:
        return {"type": "redacted_thinking", "data": t.signature}
    return {"type": "thinking", "thinking": t.text, "signature": t.signature}


def anthropic_usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    return {
        "input_tokens": u.prompt - u.cached - u.cache_written,
        "cache_read_input_tokens": u.cached,
        "cache_creation_input_tokens": u.cache_written,
        "output_tokens": u.completion,
        "output_tokens_details": {"thinking_tokens": u.reasoning},
    }


def anthropic_stop(reply: Reply) -> str:
    if reply.finish is not None:
        return reply.finish
    return "tool_use" if reply.calls else "end_turn"


def anthropic_json(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": anthropic_blocks(reply),
        "stop_reason": anthropic_stop(reply),
        "stop_sequence": None,
        "usage": anthropic_usage(reply),
    }


def anthropic_events(reply: Reply, model: str) -> list[Event]:
    start = {**anthropic_json(reply, model), "content": [], "stop_reason": None}
    start["usage"] = {**anthropic_usage(reply), "output_tokens": 1}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}, {"type": "ping"}]
    calls = iter(reply.calls)  # tool_use blocks come in the order of the calls
    for index, block in enumerate(anthropic_blocks(reply)):
        call = next(calls) if block["type"] == "tool_use" else None
        events += _block_events(reply, index, block, call)
    delta = {"stop_reason": anthropic_stop(reply), "stop_sequence": None}
    events.append(
        {
            "type": "message_delta",
            "delta": delta,
            "usage": {"output_tokens": reply.usage.completion},
        }
    )
    events.append({"type": "message_stop"})
    return [(e["type"], json.dumps(e)) for e in events]


def _block_events(
    reply: Reply, index: int, block: dict[str, Any], call: FakeCall | None
) -> list[dict[str, Any]]:
    kind = block["type"]
    empty = {
        "text": {"type": "text", "text": ""},
        "thinking": {"type": "thinking", "thinking": "", "signature": ""},
        "tool_use": {**block, "input": {}},
        "redacted_thinking": block,
    }[kind]
    events: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": index, "content_block": empty}
    ]

    def delta(d: dict[str, Any]) -> None:
        events.append({"type": "content_block_delta", "index": index, "delta": d})

    if kind == "text":
        for p in pieces(block["text"], reply.chunk_size):
            delta({"type": "text_delta", "text": p})
    elif kind == "thinking":
        for p in pieces(block["thinking"], reply.chunk_size):
            delta({"type": "thinking_delta", "thinking": p})
        delta({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use" and call is not None:
        for p in pieces(call.arguments_text(), reply.chunk_size):
            delta({"type": "input_json_delta", "partial_json": p})
    events.append({"type": "content_block_stop", "index": index})
    return events


# --------------------------------------------------------------------------- requests

_ROLES: dict[Api, frozenset[str]] = {
    "chat": frozenset({"system", "developer", "user", "assistant", "tool"}),
    "responses": frozenset({"system", "developer", "user", "assistant"}),
    "anthropic": frozenset({"user", "assistant"}),
}


def request_problem(api: Api, body: object) -> str | None:
    """What makes ``body`` a request the real API answers with a 400, or None.

    Not the whole schema: the checks a request built by a careless client
    fails first (no model, no conversation, a role the API does not know,
    Anthropic's required ``max_tokens``).
    """
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: a model name is required"
    key = "input" if api == "responses" else "messages"
    conversation = body.get(key)
    if api == "responses" and isinstance(conversation, str) and conversation:
        return None
    if not isinstance(conversation, list) or not conversation:
        return f"{key}: at least one message is required"
    for n, message in enumerate(conversation):
        if not isinstance(message, dict):
            return f"{key}.{n}: must be an object"
        role = message.get("role")
        if role is not None and role not in _ROLES[api]:
            return f"{key}.{n}.role: {role!r} is not one of {sorted(_ROLES[api])}"
        if role is None and api != "responses":
            return f"{key}.{n}.role: a role is required"
    if api == "anthropic":
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            return "max_tokens: a positive integer is required"
    return format_problem(api, body)


# --------------------------------------------------------------------------- reply formats

_FORMAT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def asked_format(api: Api, body: dict[str, Any]) -> dict[str, Any] | None:
    """The structured-output request of ``body`` in its API's place, or None."""
    if api == "chat":
        found = body.get("response_format")
    elif api == "responses":
        found = (body.get("text") or {}).get("format")
    else:
        found = (body.get("output_config") or {}).get("format")
    return found if isinstance(found, dict) else None


def format_problem(api: Api, body: dict[str, Any]) -> str | None:
    """What the real API refuses in a request's reply format or forced tool, or None."""
    asked = asked_format(api, body)
    if asked is not None:
        spec = asked.get("json_schema") if api == "chat" else asked
        if asked.get("type") != "json_schema" or not isinstance(spec, dict):
            return "reply format: type must be json_schema, with its schema"
        if not isinstance(spec.get("schema"), dict):
            return "reply format: schema must be a JSON object"
        if api != "anthropic" and not _FORMAT_NAME.fullmatch(str(spec.get("name", ""))):
            return "reply format: name must be 1-64 letters, digits, '_' or '-'"
        if api != "anthropic" and not isinstance(spec.get("strict"), bool | None):
            return "reply format: strict must be a boolean"
    choice = body.get("tool_choice")
    if api == "anthropic" and isinstance(choice, dict) and choice.get("type") in ("tool", "any"):
        names = [tool.get("name") for tool in body.get("tools") or []]
        if choice["type"] == "tool" and choice.get("name") not in names:
            return f"tool_choice: no tool is called {choice.get('name')!r}"
        if body.get("thinking"):
            return "tool_choice: thinking may not be used when tool use is forced"
    return None


def honour_format(api: Api, body: dict[str, Any], reply: Reply) -> Reply:
    """``reply`` as a model held to the request's reply tool gives it.

    An Anthropic request that forces a tool (``tool_choice`` ``tool``, or ``any``:
    then the last tool, where roost puts the reply's) gets the scripted text, which is
    the JSON of the reply, as that tool's input. Structured outputs need nothing: the
    scripted text is already the JSON the model would write.
    """
    choice = body.get("tool_choice")
    if api != "anthropic" or not isinstance(choice, dict) or reply.calls or not reply.text:
        return reply
    tools = body.get("tools") or []
    if choice.get("type") == "tool":
        name = choice.get("name")
    elif choice.get("type") == "any" and tools:
        name = tools[-1].get("name")
    else:
        return reply
    try:
        arguments: dict[str, Any] | str = json.loads(reply.text)
    except ValueError:
        arguments = reply.text  # sent as the model wrote it: not JSON
    if not isinstance(arguments, dict):
        arguments = reply.text
    call = FakeCall(name=str(name), arguments=arguments, id="toolu_reply")
    return replace(reply, text="", calls=(call,))
