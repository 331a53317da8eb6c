"""Structured replies on each wire format, made by the official SDKs against the fake server."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from fakes.script import FakeCall, Reply

from roost.engine.structured import make_format
from roost.messages import ModelRequest, ToolSpec, UserMessage
from roost.providers.anthropic import uses_reply_tool

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider

VERDICT: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"enum": ["approve", "revise"]}, "notes": {"type": "string"}},
    "required": ["verdict"],
}
STRICT: dict[str, Any] = {
    **VERDICT,
    "required": ["verdict", "notes"],
    "additionalProperties": False,
}
ANSWER = json.dumps({"verdict": "approve", "notes": "fine"})
LOOKUP = ToolSpec(name="lookup", description="Look a word up")
OLD_CLAUDE = "claude-3-5-sonnet-latest"


def asking(schema: dict[str, Any] = VERDICT, *tools: ToolSpec) -> ModelRequest:
    return ModelRequest(
        system="You review drafts.",
        messages=(UserMessage(content="Review: hello"),),
        tools=tools,
        node="critic",
        reply_format=make_format("critic", schema),
    )


def body(server: FakeLLMServer) -> dict[str, Any]:
    return server.requests[-1].body


@pytest.mark.parametrize("stream", [True, False])
async def test_each_api_is_sent_its_own_structured_output_and_the_json_streams(
    kind: str, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    provider = make_provider(kind, stream=stream)
    server.script(Reply(text=ANSWER))
    chunks: list[str] = []
    response = await provider.complete(asking(), on_text=chunks.append)
    assert response.message.content == ANSWER
    assert ("".join(chunks) == ANSWER and len(chunks) > 1) if stream else chunks == []
    sent = body(server)
    if kind == "openai":
        assert sent["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "critic_reply", "schema": VERDICT, "strict": False},
        }
    elif kind == "openai-responses":
        assert sent["text"] == {
            "format": {
                "type": "json_schema",
                "name": "critic_reply",
                "schema": VERDICT,
                "strict": False,
            }
        }
    else:
        assert sent["output_config"] == {"format": {"type": "json_schema", "schema": VERDICT}}
        assert "tool_choice" not in sent and "tools" not in sent


async def test_a_schema_openai_can_hold_exactly_is_sent_strict(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text=ANSWER), Reply(text=ANSWER))
    await make_provider("openai").complete(asking(STRICT))
    assert body(server)["response_format"]["json_schema"]["strict"] is True
    await make_provider("openai-responses").complete(asking(STRICT))
    assert body(server)["text"]["format"]["strict"] is True


def test_strict_only_when_every_object_requires_all_and_allows_no_other() -> None:
    assert make_format("a", STRICT).strict
    assert not make_format("a", VERDICT).strict  # notes is optional
    loose = {**STRICT, "additionalProperties": True}
    assert not make_format("a", loose).strict
    nested = {**STRICT, "properties": {**STRICT["properties"], "more": VERDICT}}
    nested["required"] = ["verdict", "notes", "more"]
    assert not make_format("a", nested).strict
    assert make_format("my critic!", STRICT).name == "my_critic_reply"


async def test_without_a_reply_format_no_api_is_asked_for_one(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text="plain"))
    plain = asking().model_copy(update={"reply_format": None})
    await make_provider(kind).complete(plain)
    sent = body(server)
    for key in ("response_format", "text", "output_config", "tool_choice", "tools"):
        assert key not in sent


@pytest.mark.parametrize("stream", [True, False])
async def test_an_older_claude_gives_the_reply_through_a_forced_tool(
    stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    provider = make_provider("anthropic", model=OLD_CLAUDE, stream=stream)
    server.script(Reply(text=ANSWER, chunk_size=5))
    chunks: list[str] = []
    response = await provider.complete(asking(), on_text=chunks.append)
    sent = body(server)
    assert "output_config" not in sent
    assert sent["tool_choice"] == {"type": "tool", "name": "critic_reply"}
    assert sent["tools"][-1]["name"] == "critic_reply"
    assert sent["tools"][-1]["input_schema"] == VERDICT
    assert json.loads(response.message.content) == json.loads(ANSWER)
    assert response.message.tool_calls == ()
    if stream:  # the tool's input is the reply: shown as it comes
        assert len(chunks) > 1 and json.loads("".join(chunks)) == json.loads(ANSWER)


async def test_an_older_claude_with_tools_may_call_them_before_the_reply_tool(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    provider = make_provider("anthropic", model=OLD_CLAUDE)
    both = (FakeCall("lookup", {"w": "x"}, id="t1"), FakeCall("critic_reply", {"verdict": "x"}))
    server.script(Reply(calls=both), Reply(text=ANSWER))
    first = await provider.complete(asking(VERDICT, LOOKUP))
    sent = body(server)
    assert sent["tool_choice"] == {"type": "any"}
    assert [tool["name"] for tool in sent["tools"]] == ["lookup", "critic_reply"]
    assert [call.name for call in first.message.tool_calls] == ["lookup"]  # run first
    second = await provider.complete(asking(VERDICT, LOOKUP))
    assert json.loads(second.message.content) == json.loads(ANSWER)
    assert second.message.tool_calls == ()


async def test_an_older_claude_thinking_is_offered_the_reply_tool_unforced(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    provider = make_provider("anthropic", model=OLD_CLAUDE, thinking={"budget_tokens": 1024})
    server.script(Reply(calls=(FakeCall("critic_reply", {"verdict": "revise"}),)))
    response = await provider.complete(asking())
    sent = body(server)
    assert "tool_choice" not in sent  # the API refuses a forced tool while thinking
    assert sent["tools"][-1]["name"] == "critic_reply"
    assert json.loads(response.message.content) == {"verdict": "revise"}


@pytest.mark.parametrize(
    ("model", "through_tool"),
    [
        ("claude-3-5-sonnet-latest", True),
        ("claude-3-haiku-20240307", True),
        ("claude-2.1", True),
        ("claude-sonnet-4-20250514", True),
        ("claude-opus-4-1-20250805", True),
        ("claude-opus-4-0", True),
        ("claude-sonnet-4-5", False),
        ("claude-haiku-4-5-20251001", False),
        ("claude-opus-4-6", False),
        ("claude-sonnet-5-5", False),
        ("glm-4.6", False),
    ],
)
def test_which_models_get_the_reply_tool(model: str, through_tool: bool) -> None:
    assert uses_reply_tool(model) is through_tool
