"""Attributes of the OpenTelemetry GenAI semantic conventions, from roost's events.

The names follow the conventions for generative AI spans (``gen_ai.*``):
``chat`` for a model call, ``invoke_agent`` for an agent's reply,
``execute_tool`` for a tool call and ``invoke_workflow`` for the run.
roost's own facts (run id, seq, node, the flow's provider entry) are
``roost.*``. Message contents are added only when asked for: they come from
the events, in which values read from the environment are masked already.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roost.flow.yamlread import build, compose

if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.events import LlmCallEvent, LlmUsage, ToolCallEvent, ToolResultEvent
    from roost.telemetry.records import Attributes

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"  # the older name of gen_ai.provider.name, still read by many tools
CONVERSATION = "gen_ai.conversation.id"
RUN = "roost.run.id"
SEQ = "roost.seq"

# The conventions' provider names for the kinds of a flow's providers entries.
_PROVIDER_NAMES = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic"}

_USAGE = (
    ("prompt_tokens", "gen_ai.usage.input_tokens"),
    ("completion_tokens", "gen_ai.usage.output_tokens"),
    ("cached_tokens", "gen_ai.usage.cache_read.input_tokens"),
    ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"),
)


@dataclass(frozen=True, slots=True)
class FlowFacts:
    """What the spans need from a run's flow text: its providers' kinds and models, its channels."""

    name: str
    kinds: Mapping[str, str]
    models: Mapping[str, str]
    channels: frozenset[str]


def flow_facts(name: str, text: str, path: str) -> FlowFacts:
    """The facts of a recorded flow's text; none when the text does not read as a flow."""
    try:
        data = build(compose(text, path), path).data
    except Exception:  # an imported run may hold any text: its spans just say less
        return FlowFacts(name, {}, {}, frozenset())
    providers = data.get("providers")
    providers = providers if isinstance(providers, dict) else {}
    kinds: dict[str, str] = {}
    models: dict[str, str] = {}
    for entry, config in providers.items():
        if not isinstance(config, dict):
            continue
        if isinstance(config.get("kind"), str):
            kinds[str(entry)] = config["kind"]
        model = config.get("model")
        if isinstance(model, str) and "${" not in model:  # a placeholder says nothing
            models[str(entry)] = model
    channels = data.get("channels")
    return FlowFacts(name, kinds, models, frozenset(channels if isinstance(channels, dict) else ()))


def provider_name(facts: FlowFacts, entry: str) -> str:
    """The conventions' name of the provider behind a flow's providers entry."""
    kind = facts.kinds.get(entry)
    if kind is None:
        return entry  # a flow we could not read: its entry's own name
    return _PROVIDER_NAMES.get(kind, kind)


def chat_attributes(event: LlmCallEvent, facts: FlowFacts, content: bool) -> Attributes:
    """The attributes of an ``llm_call``'s ``chat`` span."""
    attempts = event.attempts
    answered_by = attempts[-1].provider if attempts else event.provider
    provider = provider_name(facts, answered_by)
    requested = attempts[0].model if attempts else facts.models.get(event.provider, event.model)
    attributes: Attributes = {
        OPERATION: "chat",
        PROVIDER: provider,
        SYSTEM: provider,
        "gen_ai.request.model": requested,
        CONVERSATION: event.run,
        RUN: event.run,
        SEQ: event.seq,
        "roost.node": event.node,
        "roost.provider": event.provider,
        "roost.request_digest": event.request_digest,
    }
    if event.tools:
        attributes["roost.tools"] = tuple(event.tools)
    if len(attempts) > 1:
        attributes["roost.attempts"] = len(attempts)
    response = event.response
    if response is not None and event.error is None:
        attributes["gen_ai.response.model"] = event.model
        if response.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = (response.finish_reason,)
    if event.usage is not None:
        attributes.update(usage_attributes(event.usage))
    if content and response is not None:
        attributes["gen_ai.output.messages"] = _output_messages(event)
    return attributes


def failure_type(event: LlmCallEvent) -> str:
    """``error.type`` of a failed call: how its last attempt ended, else ``provider_error``."""
    for attempt in reversed(event.attempts):
        if attempt.outcome not in ("ok", "sent"):
            return attempt.outcome
    return "provider_error"


def usage_attributes(usage: LlmUsage) -> Attributes:
    return {name: getattr(usage, field) for field, name in _USAGE}


def add_usage(totals: Attributes, usage: LlmUsage) -> None:
    """Adds one call's tokens to the totals of the reply it is part of."""
    for field, name in _USAGE:
        before = totals.get(name, 0)
        totals[name] = (before if isinstance(before, int) else 0) + getattr(usage, field)


def tool_attributes(call: ToolCallEvent, content: bool) -> Attributes:
    """The attributes of a ``tool_call``'s ``execute_tool`` span."""
    attributes: Attributes = {
        OPERATION: "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
        RUN: call.run,
        SEQ: call.seq,
        "roost.node": call.agent,
    }
    if content:
        attributes["gen_ai.tool.call.arguments"] = _json(call.arguments)
    return attributes


def result_attributes(result: ToolResultEvent, content: bool) -> Attributes:
    """What a ``tool_result`` adds to its call's span."""
    attributes: Attributes = {"roost.result_seq": result.seq}
    if result.child_run is not None:
        attributes["roost.child_run"] = result.child_run
    if content:
        attributes["gen_ai.tool.call.result"] = result.content
    return attributes


def text_message(text: str) -> str:
    """``gen_ai.output.messages`` of a reply: one assistant message holding ``text``."""
    return _json([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def _output_messages(event: LlmCallEvent) -> str:
    response = event.response
    assert response is not None
    parts: list[dict[str, Any]] = [
        {"type": "reasoning", "content": part.text} for part in response.reasoning if part.text
    ]
    if response.text:
        parts.append({"type": "text", "content": response.text})
    parts += [
        {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
        for call in response.tool_calls
    ]
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if response.finish_reason:
        message["finish_reason"] = response.finish_reason
    return _json([message])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
