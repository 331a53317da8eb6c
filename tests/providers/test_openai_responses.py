"""What the Responses API needs of its own: no state kept on the server, reasoning items,
parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.script import Reply

from roost.messages import (
    ModelRequest,
    ReasoningPart,
    UserMessage,
)

from .conftest import ADD, MINE, tool_loop

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from .conftest import MakeProvider


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
