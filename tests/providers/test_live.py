"""Real models, when a key is set: the same behaviour as against the fake server.

These run only with ``OPENAI_API_KEY`` or ``ANTHROPIC_API_KEY`` in the
environment (``ROOST_LIVE_OPENAI_MODEL`` and ``ROOST_LIVE_ANTHROPIC_MODEL``
choose the models). They are extra: every behaviour here is also tested
against the fake server.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from pydantic import TypeAdapter

from roost.flow.models import ProviderConfig
from roost.messages import ModelRequest, ToolResultMessage, ToolSpec, UserMessage
from roost.providers.base import Provider, ProviderContext
from roost.providers.registry import _factory

KEYS = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
MODELS = {
    "openai": os.environ.get("ROOST_LIVE_OPENAI_MODEL", "gpt-4o-mini"),
    "openai-responses": os.environ.get("ROOST_LIVE_OPENAI_MODEL", "gpt-4o-mini"),
    "anthropic": os.environ.get("ROOST_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5"),
}
ADD = ToolSpec(
    name="add",
    description="Add two integers and return the sum.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)

pytestmark = pytest.mark.live


def live_provider(kind: str) -> Provider:
    key = os.environ.get(KEYS[kind])
    if not key:
        pytest.skip(f"{KEYS[kind]} is not set")
    data = {"kind": kind, "model": MODELS[kind], "max_tokens": 300, "timeout": 60}
    config: Any = TypeAdapter(ProviderConfig).validate_python(data)
    return _factory(kind)("live", config, ProviderContext(secrets=frozenset({key})))


@pytest.mark.parametrize("kind", list(KEYS))
async def test_live_text_streams(kind: str) -> None:
    provider = live_provider(kind)
    chunks: list[str] = []
    ask = ModelRequest(
        system="Answer with one word.", messages=(UserMessage(content="Capital of France?"),)
    )
    response = await provider.complete(ask, on_text=chunks.append)
    assert "paris" in response.message.content.lower()
    assert "".join(chunks) == response.message.content
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.attempts[-1]["outcome"] == "ok"


@pytest.mark.parametrize("kind", list(KEYS))
async def test_live_tool_loop(kind: str) -> None:
    provider = live_provider(kind)
    ask = ModelRequest(
        system="Use the add tool for every sum, then give the result.",
        messages=(UserMessage(content="What is 1234 + 4321?"),),
        tools=(ADD,),
    )
    first = await provider.complete(ask)
    assert first.message.tool_calls, first.message.content
    results = tuple(
        ToolResultMessage(
            tool_call_id=call.id,
            name=call.name,
            content=str(int(call.arguments["a"]) + int(call.arguments["b"])),
        )
        for call in first.message.tool_calls
    )
    second = await provider.complete(
        ask.model_copy(update={"messages": (*ask.messages, first.message, *results)})
    )
    assert "5555" in second.message.content.replace(",", "")


async def test_live_wrong_key_is_one_clear_line() -> None:
    from roost.errors import ProviderError

    if not os.environ.get("OPENAI_API_KEY"):
        pytest.skip("OPENAI_API_KEY is not set")
    data = {"kind": "openai", "model": MODELS["openai"], "api_key": "sk-wrong-key-0000"}
    config: Any = TypeAdapter(ProviderConfig).validate_python(data)
    context = ProviderContext(secrets=frozenset({"sk-wrong-key-0000"}))
    provider = _factory("openai")("live", config, context)
    with pytest.raises(ProviderError) as caught:
        await provider.complete(ModelRequest(messages=(UserMessage(content="hi"),)))
    assert "HTTP 401" in str(caught.value) and "sk-wrong-key-0000" not in str(caught.value)
