"""Behaviour every backend shares, checked against the fake server through the real SDKs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.script import FakeCall, FakeUsage, Reply, Thinking

from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider

ADD = ToolSpec(
    name="add",
    description="Add two integers",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}}},
)


def request(*messages: UserMessage | AssistantMessage | ToolResultMessage) -> ModelRequest:
    return ModelRequest(system="You add numbers.", messages=messages, tools=(ADD,), node="adder")


def wire_messages(server: FakeLLMServer, n: int = -1) -> list[dict[str, object]]:
    body = server.requests[n].body
    return list(body.get("messages") or body.get("input") or [])


@pytest.mark.parametrize("stream", [True, False])
async def test_text_answer_streams_and_accumulates(
    kind: str, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    provider = make_provider(kind, stream=stream)
    server.script(Reply(text="Two plus two is four."))
    chunks: list[str] = []
    response = await provider.complete(request(UserMessage(content="2+2?")), on_text=chunks.append)
    assert response.message.content == "Two plus two is four."
    assert response.message.provider == "llm" and response.provider == "llm"
    assert response.model == f"{kind}-model"
    if stream:
        assert len(chunks) > 1 and "".join(chunks) == "Two plus two is four."
    else:
        assert chunks == []
    assert server.requests[0].body["stream"] is stream
    assert response.attempts == (
        {"provider": "llm", "model": f"{kind}-model", "outcome": "ok", "status": 200},
    )


async def test_system_prompt_placement(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text="ok"))
    await make_provider(kind).complete(request(UserMessage(content="hi")))
    body = server.requests[0].body
    if kind == "openai":
        assert body["messages"][0] == {"role": "system", "content": "You add numbers."}
    elif kind == "openai-responses":
        assert body["instructions"] == "You add numbers."
        assert all(item.get("role") != "system" for item in body["input"])
    else:
        assert body["system"] == "You add numbers."
        assert all(m["role"] != "system" for m in body["messages"])


@pytest.mark.parametrize("stream", [True, False])
async def test_parallel_tool_calls(
    kind: str, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(
        Reply(calls=(FakeCall("add", {"a": 1}, id="c1"), FakeCall("add", {"a": 20}, id="c2")))
    )
    response = await make_provider(kind, stream=stream).complete(request(UserMessage(content="x")))
    calls = response.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "add", {"a": 1}),
        ("c2", "add", {"a": 20}),
    ]
    assert all(c.raw_arguments is None for c in calls)


@pytest.mark.parametrize("kind", ["openai", "openai-responses"])
@pytest.mark.parametrize("stream", [True, False])
async def test_malformed_tool_arguments_are_kept_raw(
    kind: str, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(calls=(FakeCall("add", '{"a": 1', id="c1"),)))
    response = await make_provider(kind, stream=stream).complete(request(UserMessage(content="x")))
    (call,) = response.message.tool_calls
    assert call.arguments == {} and call.raw_arguments == '{"a": 1'


async def test_anthropic_malformed_streamed_input_is_kept_raw(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(calls=(FakeCall("add", '{"a": ', id="t1"),)))
    response = await make_provider("anthropic").complete(request(UserMessage(content="x")))
    assert response.message.tool_calls[0].raw_arguments == '{"a": '


async def test_tool_results_follow_their_calls_in_order(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    calls = (
        ToolCall(id="c1", name="add", arguments={"a": 1}),
        ToolCall(id="c2", name="add", arguments={"a": 2}),
        ToolCall(id="c3", name="add", arguments={"a": 3}),
    )
    history = (
        UserMessage(content="add them"),
        AssistantMessage(content="", tool_calls=calls, provider="llm"),
        # Results arrive out of order and c3 never got one (the run stopped).
        ToolResultMessage(tool_call_id="c2", name="add", content="2"),
        ToolResultMessage(tool_call_id="c1", name="add", content="boom", is_error=True),
    )
    server.script(Reply(text="done"))
    await make_provider(kind).complete(request(*history))
    sent = wire_messages(server)
    if kind == "openai":
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "tool"]
        assert [m["tool_call_id"] for m in sent[3:]] == ["c1", "c2", "c3"]
        assert sent[3]["content"] == "Error: boom"
        assert "no result was recorded" in str(sent[5]["content"])
    elif kind == "openai-responses":
        kinds = [item.get("type") for item in sent]
        assert kinds == ["message"] + ["function_call"] * 3 + ["function_call_output"] * 3
        assert [item["call_id"] for item in sent[4:]] == ["c1", "c2", "c3"]
    else:
        assert [m["role"] for m in sent] == ["user", "assistant", "user"]
        results = sent[2]["content"]
        assert isinstance(results, list)
        assert [b["tool_use_id"] for b in results] == ["c1", "c2", "c3"]
        assert results[0]["is_error"] is True and "is_error" not in results[1]
        assert results[2]["is_error"] is True


async def test_result_answering_no_call_is_refused(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    from roost.errors import ProviderError

    history = (
        UserMessage(content="x"),
        ToolResultMessage(tool_call_id="zz", name="add", content="1"),
    )
    with pytest.raises(ProviderError, match="answers no tool call"):
        await make_provider(kind).complete(request(*history))
    assert server.requests == []


@pytest.mark.parametrize("stream", [True, False])
async def test_usage_is_mapped(
    kind: str, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    # Of the 120 prompt tokens, 100 were read from the cache and 8 written to it.
    usage = FakeUsage(prompt=120, completion=30, cached=100, reasoning=12, cache_written=8)
    server.script(Reply(text="ok", usage=usage))
    response = await make_provider(kind, stream=stream).complete(request(UserMessage(content="x")))
    assert response.usage == Usage(
        prompt_tokens=120, completion_tokens=30, cached_tokens=100, reasoning_tokens=12, calls=1
    )


async def test_reasoning_goes_back_only_to_the_provider_that_made_it(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(
        Reply(calls=(FakeCall("add", {"a": 1}, id="c1"),), thinking=(Thinking("let me add", "S1"),))
    )
    provider = make_provider(kind, name="mine")
    first = await provider.complete(request(UserMessage(content="x")))
    assert len(first.message.reasoning) == 1
    result = ToolResultMessage(tool_call_id="c1", name="add", content="1")
    server.script(Reply(text="one"), Reply(text="one"))
    assert all(part.provider_details == {"provider": "mine"} for part in first.message.reasoning)
    # Filed under another provider's name (the engine does that with fallbacks), the
    # parts still go back to their maker; parts another provider made do not.
    filed = first.message.model_copy(update={"provider": "chain"})
    foreign_parts = tuple(
        p.model_copy(update={"provider_details": {"provider": "other"}})
        for p in first.message.reasoning
    )
    foreign = first.message.model_copy(update={"reasoning": foreign_parts})
    await provider.complete(request(UserMessage(content="x"), filed, result))
    await provider.complete(request(UserMessage(content="x"), foreign, result))
    own_wire, foreign_wire = str(server.requests[1].body), str(server.requests[2].body)
    secret = "S1" if kind != "openai" else "let me add"
    assert secret in own_wire
    assert secret not in foreign_wire


def test_a_provider_survives_a_new_event_loop(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    import asyncio

    provider = make_provider(kind)
    server.script(Reply(text="one"), Reply(text="two"))
    ask = request(UserMessage(content="x"))
    assert asyncio.run(provider.complete(ask)).message.content == "one"
    assert asyncio.run(provider.complete(ask)).message.content == "two"
