"""What the Chat Completions API and its compatible servers need of their own: reasoning
content, stream quirks, parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.script import FakeCall, Reply

from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningPart,
    ToolResultMessage,
    UserMessage,
)

from .conftest import MINE, tool_loop

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider


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
