"""OpenTelemetry: OTLP JSON spans that follow the GenAI conventions.

The file is what the collector's file exporter writes (one export request, or
one a line) or ``roost export --to otel``. Two readings:

- roost's own spans: the run span's ``roost.message`` events hold each
  message; ``chat`` spans the model calls (``roost.node``, tool calls in
  ``gen_ai.output.messages``, usage, model); ``execute_tool`` spans the results.
- any other engine's ``chat`` spans, in time order: the speaker is the
  ``gen_ai.agent.name`` of the span or of a span above it; its system
  instructions its role; the input messages after the last assistant message
  are what others said (a user's, a tool's results); the output its reply.
  Messages as attributes (``gen_ai.input.messages``, ``gen_ai.output.messages``,
  ``gen_ai.system_instructions``) or, in the older form, as span events
  (``gen_ai.user.message``, ``gen_ai.choice``, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from roost.importers.common import (
    TurnBuilder,
    arguments_of,
    expect_list,
    expect_object,
    text_of,
    usage_of,
)
from roost.importers.model import Conversation, ImportedTurn, ImportFormatError, ToolCall


@dataclass
class Span:
    id: str
    parent: str
    name: str
    start: int
    attrs: dict[str, Any]
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    error: bool = False


def read(data: Any, file: str) -> Conversation:
    """The conversation the spans of ``data`` record."""
    spans = _spans(data, file)
    talk = Conversation([], source={"format": "otel", "file": file})
    if any(name == "roost.message" for s in spans for name, _, _ in s.events):
        talk.turns = _roost_turns(spans, file, talk)
        talk.notes.append("system messages: roost's spans do not hold the flow; no role")
    else:
        talk.turns = _genai_turns(spans, file, talk)
    return talk


# ------------------------------------------------------------------ OTLP JSON


def _spans(data: Any, file: str) -> list[Span]:
    top = expect_object(data, file, "OTLP JSON (an object with resourceSpans)")
    if "resourceSpans" not in top:
        raise ImportFormatError(f"{file}: not OTLP JSON spans (no 'resourceSpans')")
    spans = []
    for resource in expect_list(top["resourceSpans"], file, "resourceSpans (a list)"):
        for scope in expect_object(resource, file, "a resourceSpans entry").get("scopeSpans", []):
            for raw in expect_object(scope, file, "a scopeSpans entry").get("spans", []):
                spans.append(_span(expect_object(raw, file, "a span")))
    return sorted(spans, key=lambda s: s.start)


def _span(raw: dict[str, Any]) -> Span:
    events = [
        (str(e.get("name")), int(e.get("timeUnixNano") or 0), _attrs(e.get("attributes")))
        for e in raw.get("events") or []
    ]
    status = raw.get("status") or {}
    return Span(
        str(raw.get("spanId", "")),
        str(raw.get("parentSpanId") or ""),
        str(raw.get("name", "")),
        int(raw.get("startTimeUnixNano") or 0),
        _attrs(raw.get("attributes")),
        events,
        status.get("code") in (2, "STATUS_CODE_ERROR"),
    )


def _attrs(raw: Any) -> dict[str, Any]:
    return {
        str(a.get("key")): _value(a.get("value") or {}) for a in raw or [] if isinstance(a, dict)
    }


def _value(value: dict[str, Any]) -> Any:
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    if "intValue" in value:
        return int(value["intValue"])
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    return None


def _iso(ns: int) -> str | None:
    if not ns:
        return None
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(ns / 1e9, UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _usage(attrs: dict[str, Any]) -> dict[str, int] | None:
    if "gen_ai.usage.input_tokens" not in attrs and "gen_ai.usage.output_tokens" not in attrs:
        return None
    return usage_of(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


def _model(attrs: dict[str, Any]) -> str | None:
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    return str(model) if model else None


def _is_chat(span: Span) -> bool:
    return span.attrs.get("gen_ai.operation.name") == "chat"


# ------------------------------------------------------------------ roost's own spans


def _roost_turns(spans: list[Span], file: str, talk: Conversation) -> list[ImportedTurn]:
    notes = sorted((a.get("roost.seq", 0), name, t, a) for s in spans for name, t, a in s.events)
    channels = {s.attrs["roost.channel"] for s in spans if "roost.channel" in s.attrs}
    chats = [s for s in spans if _is_chat(s) and s.attrs.get("roost.node") not in channels]
    chats.sort(key=lambda s: s.attrs.get("roost.seq", 0))
    tools = _tool_spans(spans)
    build = TurnBuilder(talk.notes)
    resumed: set[int] = set()
    for seq, name, time, attrs in notes:
        if name == "roost.resume":
            resumed.add(seq + 1)
        if name != "roost.message":
            continue
        if "roost.content" not in attrs:
            raise ImportFormatError(f"{file}: the spans hold no message contents")
        speaker, human = str(attrs.get("roost.from")), seq in resumed
        mine = [
            c for c in chats if c.attrs.get("roost.node") == speaker and c.attrs["roost.seq"] < seq
        ]
        usage = model = None
        for chat in mine:
            chats.remove(chat)
            calls = _output_calls(chat.attrs.get("gen_ai.output.messages"), file)
            if calls:
                build.tool_round(
                    speaker,
                    [_answered(c, tools) for c in calls],
                    model=_model(chat.attrs),
                    usage=_usage(chat.attrs),
                )
            else:
                usage, model = _usage(chat.attrs), _model(chat.attrs)
        build.say(
            speaker,
            str(attrs["roost.content"]),
            ts=_iso(time),
            human=human,
            usage=usage,
            model=model,
        )
    return build.done()


def _tool_spans(spans: list[Span]) -> dict[str, list[Span]]:
    found: dict[str, list[Span]] = {}
    for span in spans:
        if span.attrs.get("gen_ai.operation.name") == "execute_tool":
            found.setdefault(str(span.attrs.get("gen_ai.tool.call.id")), []).append(span)
    return found


def _answered(call: ToolCall, tools: dict[str, list[Span]]) -> ToolCall:
    spans = tools.get(call.id) or []
    if not spans:
        return call
    span = spans.pop(0)
    result = span.attrs.get("gen_ai.tool.call.result")
    text = None if result is None else text_of(result)
    return ToolCall(call.id, call.name, call.arguments, text, span.error)


def _output_calls(raw: Any, file: str) -> list[ToolCall]:
    calls = []
    for message in _messages(raw, file):
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call":
                calls.append(_call(part))
    return calls


def _call(part: dict[str, Any]) -> ToolCall:
    return ToolCall(str(part.get("id")), str(part.get("name")), arguments_of(part.get("arguments")))


def _messages(raw: Any, file: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError as exc:
        raise ImportFormatError(f"{file}: a span's messages are not JSON") from exc
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


# ------------------------------------------------------------------ any engine's chat spans


def _genai_turns(spans: list[Span], file: str, talk: Conversation) -> list[ImportedTurn]:
    chats = [s for s in spans if _is_chat(s) or s.name.startswith("chat ")]
    if not chats:
        raise ImportFormatError(f"{file}: no GenAI chat spans (gen_ai.operation.name: chat)")
    by_id = {s.id: s for s in spans}
    tools = _tool_spans(spans)
    build = TurnBuilder(talk.notes)
    for chat in chats:
        speaker = _agent(chat, by_id)
        system, inputs, outputs = _chat_messages(chat, file)
        if system and speaker not in talk.roles:
            talk.roles[speaker] = system
        for message in _new(inputs):
            _heard(build, message, file)
        for message in outputs:
            _replied(build, speaker, message, chat, tools)
    talk.source["engine"] = next(
        (str(s.attrs["gen_ai.system"]) for s in chats if "gen_ai.system" in s.attrs), None
    )
    talk.notes.append("user messages: the spans do not say who wrote them; replayed as 'user'")
    missing = [s for s in dict.fromkeys(_agent(c, by_id) for c in chats) if s not in talk.roles]
    if missing:
        talk.notes.append(f"system messages: not in the spans for {', '.join(missing)}; no role")
    return build.done()


def _agent(span: Span, by_id: dict[str, Span]) -> str:
    current: Span | None = span
    while current is not None:
        name = current.attrs.get("gen_ai.agent.name")
        if name:
            return str(name)
        current = by_id.get(current.parent)
    return "assistant"


def _chat_messages(span: Span, file: str) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """The span's system text, input and output messages, in the current or the older form."""
    attrs = span.attrs
    if "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs:
        system = _parts_text(_messages(attrs.get("gen_ai.system_instructions"), file))
        inputs = _messages(attrs.get("gen_ai.input.messages"), file)
        system = system or "\n".join(_text(m) for m in inputs if m.get("role") == "system")
        inputs = [m for m in inputs if m.get("role") != "system"]
        return system, inputs, _messages(attrs.get("gen_ai.output.messages"), file)
    return _older(span)


def _parts_text(parts: list[dict[str, Any]]) -> str:
    return "\n".join(str(p.get("content", "")) for p in parts if p.get("type") == "text")


def _text(message: dict[str, Any]) -> str:
    if "parts" in message:
        return _parts_text([p for p in message["parts"] if isinstance(p, dict)])
    return text_of(message.get("content"))


def _older(span: Span) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """Messages as span events (``gen_ai.user.message``, ``gen_ai.choice``, ...)."""
    system, inputs, outputs = "", [], []
    for name, _, attrs in span.events:
        role = name.removeprefix("gen_ai.").removesuffix(".message")
        body = {**attrs, "role": role}
        if name == "gen_ai.system.message":
            system = text_of(attrs.get("content"))
        elif name == "gen_ai.choice":
            message = attrs.get("message")
            message = json.loads(message) if isinstance(message, str) else attrs
            outputs.append({**(message if isinstance(message, dict) else {}), "role": "assistant"})
        elif name.startswith("gen_ai.") and name.endswith(".message"):
            inputs.append(body)
    return system, inputs, outputs


def _new(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The input messages after the last assistant one: what others said since."""
    last = max((n for n, m in enumerate(inputs) if m.get("role") == "assistant"), default=-1)
    return inputs[last + 1 :]


def _heard(build: TurnBuilder, message: dict[str, Any], file: str) -> None:
    role = message.get("role")
    if role == "tool":
        results = []
        for part in message.get("parts") or [message]:
            call_id = part.get("id") or part.get("tool_call_id")
            content = part.get("response", part.get("content"))
            results.append((str(call_id), text_of(content), False))
        build.results(f"{file}: a tool message", results)
    elif role == "user":
        build.say(str(message.get("name") or "user"), _text(message))


def _replied(
    build: TurnBuilder,
    speaker: str,
    message: dict[str, Any],
    chat: Span,
    tools: dict[str, list[Span]],
) -> None:
    usage, model = _usage(chat.attrs), _model(chat.attrs)
    calls = [_call(p) for p in message.get("parts") or [] if p.get("type") == "tool_call"]
    calls += [
        ToolCall(
            str(c.get("id")),
            str((c.get("function") or {}).get("name")),
            arguments_of((c.get("function") or {}).get("arguments")),
        )
        for c in message.get("tool_calls") or []
    ]
    if calls:
        build.tool_round(speaker, [_answered(c, tools) for c in calls], model=model, usage=usage)
    else:
        build.say(speaker, _text(message), usage=usage, model=model, ts=_iso(chat.start))
