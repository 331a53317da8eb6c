"""What each API needs of its own: thinking, reasoning items, parameters, server quirks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.script import FakeCall, Reply, Thinking

from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ReasoningPart,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider

MINE = {"provider": "llm"}  # each reasoning part names the provider that made it
ADD = ToolSpec(name="add", description="Add", parameters={"type": "object"})


async def tool_loop(
    provider_kind: str, server: FakeLLMServer, make: MakeProvider, **cfg: object
) -> tuple[ModelResponse, ModelResponse]:
    """Two calls of one tool loop: a tool call with thinking, then the answer."""
    provider = make(provider_kind, **cfg)
    server.script(
        Reply(
            calls=(FakeCall("add", {"a": 1}, id="t1"),),
            thinking=(
                Thinking("I should add.", "SIG-1"),
                Thinking(signature="OPAQUE", redacted=True),
            ),
        ),
        Reply(text="It is 1."),
    )
    ask = ModelRequest(system="sys", messages=(UserMessage(content="add"),), tools=(ADD,))
    first = await provider.complete(ask)
    result = ToolResultMessage(tool_call_id="t1", name="add", content="1")
    follow = ask.model_copy(update={"messages": (*ask.messages, first.message, result)})
    second = await provider.complete(follow)
    return first, second


# --------------------------------------------------------------------------- anthropic


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


# --------------------------------------------------------------------------- openai chat


@pytest.mark.parametrize("stream", [True, False])
async def test_deepseek_reasoning_content_round_trip_within_the_tool_loop(
    stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    first, _ = await tool_loop("openai", server, make_provider, stream=stream)
    assert first.message.reasoning == (
        ReasoningPart(kind="reasoning_content", text="I should add.", provider_details=MINE),
    )
    sent = server.requests[1].body["messages"]
    assert sent[2]["reasoning_content"] == "I should add."
    assert sent[2]["tool_calls"][0]["id"] == "t1"
    # A later turn: the earlier loop's reasoning is not sent (DeepSeek refuses it there).
    server.script(Reply(text="bye"))
    later = (
        UserMessage(content="add"),
        first.message.model_copy(update={"provider": "llm"}),
        ToolResultMessage(tool_call_id="t1", name="add", content="1"),
        AssistantMessage(content="It is 1.", provider="llm"),
        UserMessage(content="thanks"),
    )
    await make_provider("openai").complete(ModelRequest(messages=later))
    assert all("reasoning_content" not in m for m in server.requests[2].body["messages"])


@pytest.mark.parametrize(
    "habit", [{"repeat_ids": True}, {"reuse_index": True}, {"repeat_arguments": True}]
)
async def test_chat_stream_quirks_of_compatible_servers(
    habit: dict[str, bool], server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    calls = (FakeCall("add", {"a": 1, "b": 2}, id="x1"), FakeCall("mul", {"a": 3}, id="x2"))
    server.script(Reply(calls=calls, chunk_size=3, **habit))  # type: ignore[arg-type]
    response = await make_provider("openai").complete(
        ModelRequest(messages=(UserMessage(content="x"),))
    )
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("x1", "add", {"a": 1, "b": 2}),
        ("x2", "mul", {"a": 3}),
    ]


async def test_chat_parameters(server: FakeLLMServer, make_provider: MakeProvider) -> None:
    server.script(Reply(text="a"), Reply(text="b"))
    ask = ModelRequest(messages=(UserMessage(content="x"),))
    await make_provider("openai", temperature=0.2, max_tokens=50).complete(ask)
    await make_provider(
        "openai", temperature=0.2, max_tokens=50, reasoning={"effort": "high"}
    ).complete(ask)
    plain, reasoning = (r.body for r in server.requests)
    assert plain["temperature"] == 0.2 and plain["max_tokens"] == 50
    assert plain["stream_options"] == {"include_usage": True}
    assert "temperature" not in reasoning and "max_tokens" not in reasoning
    assert reasoning["max_completion_tokens"] == 50 and reasoning["reasoning_effort"] == "high"


# --------------------------------------------------------------------------- openai responses


@pytest.mark.parametrize("stream", [True, False])
async def test_responses_is_stateless_and_round_trips_reasoning_items(
    stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    first, _ = await tool_loop(
        "openai-responses", server, make_provider, stream=stream, reasoning={"effort": "low"}
    )
    assert first.message.reasoning[0] == ReasoningPart(
        kind="reasoning", text="I should add.", data="SIG-1", id="rs_00", provider_details=MINE
    )
    for received in server.requests:
        assert received.body["store"] is False
        assert received.body["include"] == ["reasoning.encrypted_content"]
        assert "previous_response_id" not in received.body
        assert received.body["reasoning"] == {"effort": "low", "summary": "auto"}
    sent = server.requests[1].body["input"]
    assert sent[0] == {"type": "message", "role": "user", "content": "add"}
    assert sent[1] == {
        "type": "reasoning",
        "id": "rs_00",
        "summary": [{"type": "summary_text", "text": "I should add."}],
        "encrypted_content": "SIG-1",
    }
    assert sent[2]["type"] == "reasoning" and sent[2]["encrypted_content"] == "OPAQUE"
    assert sent[3] == {
        "type": "function_call",
        "call_id": "t1",
        "name": "add",
        "arguments": '{"a": 1}',
    }
    assert sent[4] == {"type": "function_call_output", "call_id": "t1", "output": "1"}


async def test_responses_parameters(server: FakeLLMServer, make_provider: MakeProvider) -> None:
    server.script(Reply(text="a"))
    ask = ModelRequest(messages=(UserMessage(content="x"),), tools=(ADD,))
    await make_provider("openai-responses", temperature=0.3, max_tokens=70).complete(ask)
    body = server.requests[0].body
    assert body["temperature"] == 0.3 and body["max_output_tokens"] == 70
    assert body["tools"] == [
        {
            "type": "function",
            "name": "add",
            "description": "Add",
            "parameters": {"type": "object"},
            "strict": False,
        }
    ]
