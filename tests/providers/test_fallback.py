"""Fallback chains: the next provider answers when one fails, never after text was shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.script import Broken, Reply, Status

from roost.errors import ProviderError
from roost.messages import ModelRequest, UserMessage
from roost.providers._retry import StreamInterruptedError
from roost.providers.fallback import with_fallbacks

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


async def test_primary_failing_hands_over_to_the_fallback(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    chain = with_fallbacks(
        [
            make_provider("openai", name="gpt", max_retries=1),
            make_provider("anthropic", name="claude"),
        ]
    )
    assert (chain.name, chain.model) == ("gpt", "openai-model")
    server.script(Status(500), Status(500), Reply(text="from claude"))
    response = await chain.complete(ASK)
    assert response.message.content == "from claude"
    assert response.provider == "claude" and response.message.provider == "claude"
    assert [(a["provider"], a["outcome"]) for a in response.attempts] == [
        ("gpt", "http 500"),
        ("gpt", "http 500"),
        ("claude", "ok"),
    ]
    assert [r.path for r in server.requests] == [
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/messages",
    ]


async def test_every_provider_failing_gives_one_error_with_all_attempts(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    chain = with_fallbacks(
        [
            make_provider("openai", name="a", max_retries=0),
            make_provider("openai-responses", name="b", max_retries=0),
        ]
    )
    server.script(Status(500, "down"), Status(404, "no model"))
    with pytest.raises(ProviderError) as caught:
        await chain.complete(ASK)
    message = str(caught.value)
    assert message.startswith("provider 'a': it and every fallback failed")
    assert "HTTP 500" in message and "HTTP 404" in message
    assert [a["provider"] for a in caught.value.attempts] == ["a", "b"]


async def test_no_fallback_after_text_was_shown(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    chain = with_fallbacks(
        [make_provider("openai", name="a"), make_provider("anthropic", name="b")]
    )
    reply = Reply(text="Hello world")
    server.script(Broken(reply, after=2, how="reset"), Reply(text="never"))
    with pytest.raises(StreamInterruptedError):
        await chain.complete(ASK, on_text=lambda _: None)
    assert len(server.requests) == 1
