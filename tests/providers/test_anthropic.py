"""What the Anthropic Messages API needs of its own: thinking, max_tokens, merged user turns."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.script import Reply

from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningPart,
    UserMessage,
)

from .conftest import ADD, MINE, tool_loop

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_thinking_and_redacted_thinking_round_trip(
    stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    first, second = await tool_loop(
        "anthropic", server, make_provider, stream=stream, thinking={"budget_tokens": 2000}
    )
    assert first.message.reasoning == (
        ReasoningPart(
            kind="thinking", text="I should add.", signature="SIG-1", provider_details=MINE
        ),
        ReasoningPart(kind="redacted_thinking", data="OPAQUE", provider_details=MINE),
    )
    assert second.message.content == "It is 1."
    assistant = server.requests[1].body["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "I should add.", "signature": "SIG-1"},
        {"type": "redacted_thinking", "data": "OPAQUE"},
        {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
    ]
    assert server.requests[1].body["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1"}],
    }


async def test_anthropic_thinking_sends_no_temperature(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text="a"), Reply(text="b"))
    ask = ModelRequest(messages=(UserMessage(content="x"),))
    await make_provider("anthropic", temperature=0.7, thinking={"budget_tokens": 1024}).complete(
        ask
    )
    await make_provider("anthropic", temperature=0.7).complete(ask)
    with_thinking, without = (r.body for r in server.requests)
    assert "temperature" not in with_thinking
    assert with_thinking["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert without["temperature"] == 0.7 and "thinking" not in without


async def test_anthropic_max_tokens(server: FakeLLMServer, make_provider: MakeProvider) -> None:
    server.script(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    ask = ModelRequest(messages=(UserMessage(content="x"),), tools=(ADD,))
    await make_provider("anthropic").complete(ask)
    await make_provider("anthropic", max_tokens=100).complete(ask)
    await make_provider("anthropic", thinking={"budget_tokens": 10000}).complete(ask)
    assert [r.body["max_tokens"] for r in server.requests] == [8192, 100, 18192]
    assert server.requests[0].body["tools"] == [
        {"name": "add", "description": "Add", "input_schema": {"type": "object"}}
    ]
    assert "system" not in server.requests[0].body  # no empty system prompt


async def test_anthropic_consecutive_user_turns_merge(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text="ok"))
    history = (
        UserMessage(content="one"),
        AssistantMessage(content=""),
        UserMessage(content="two"),
        UserMessage(content="three"),
    )
    await make_provider("anthropic").complete(ModelRequest(messages=history))
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [{"type": "text", "text": "(no answer)"}]
    assert [b["text"] for b in sent[2]["content"]] == ["two", "three"]
