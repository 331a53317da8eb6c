"""A run whose agent has a reply_format, on each backend: tools first, then a checked reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fakes import wire
from fakes.script import FakeCall, Reply

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.ports import MemoryLog

from .conftest import API_KEY

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

    from roost.flow.models import Flow

FLOW = Path(__file__).parent / "data" / "adder.yaml"
SUM: dict[str, Any] = {
    "type": "object",
    "properties": {"sum": {"type": "integer"}},
    "required": ["sum"],
}
API = {"chat": "chat", "responses": "responses", "claude": "anthropic"}


@pytest.fixture
def adder(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("FAKE_LLM_URL", server.url)
    monkeypatch.setenv("FAKE_LLM_KEY", API_KEY)

    def load(provider: str) -> Flow:
        text = FLOW.read_text().replace("provider: PROVIDER", f"provider: {provider}")
        flow = load_flow_text(text, str(FLOW))
        agent = flow.agents["adder"].model_copy(update={"reply_format": SUM})
        return flow.model_copy(update={"agents": {**flow.agents, "adder": agent}})

    return load


def last_turn(body: dict[str, Any]) -> str:
    conversation = body.get("messages") or body.get("input") or []
    return json.dumps(conversation[-2:])


@pytest.mark.parametrize("provider", ["chat", "responses", "claude"])
async def test_the_tool_loop_runs_first_and_a_bad_final_reply_is_asked_again(
    provider: str, adder: Any, server: FakeLLMServer
) -> None:
    server.script(
        Reply(calls=(FakeCall("add", {"a": 2, "b": 3}, id="c1"),)),
        Reply(text='{"sum": "five"}'),
        Reply(text='{"sum": 5}'),
    )
    shown: list[str] = []
    log = MemoryLog("run-1")
    runner = Runner(flow=adder(provider), log=log, on_text=lambda node, chunk: shown.append(chunk))
    state = await runner.start()
    assert state.status == "paused"
    assert state.history[-2].content == '{"sum": 5}'
    assert "".join(shown) == '{"sum": "five"}{"sum": 5}'  # each reply streamed as it came
    bodies = [request.body for request in server.requests]
    assert len(bodies) == 3
    api = API[provider]
    assert all(wire.asked_format(api, body) for body in bodies)  # every request of the reply
    assert '"add"' in json.dumps(bodies[0]["tools"])
    follow_up = last_turn(bodies[2])
    assert '{\\"sum\\": \\"five\\"}' in follow_up and "is not of type" in follow_up
    result = next(e for e in log.load() if e.type == "tool_result")
    assert result.content == "5"
    assert [e.type for e in log.load()].count("llm_call") == 3


async def test_a_reply_failing_twice_on_the_wire_is_an_error_that_retry_redoes(
    adder: Any, server: FakeLLMServer
) -> None:
    server.script(Reply(text="sure!"), Reply(text="{}"), Reply(text='{"sum": 1}'))
    log = MemoryLog("run-1")
    runner = Runner(flow=adder("chat"), log=log)
    state = await runner.start()
    assert state.status == "error"
    error = next(e for e in log.load() if e.type == "error")
    assert "'sum' is a required property" in error.content
    state = await runner.retry()
    assert state.status == "paused" and state.history[-2].content == '{"sum": 1}'
    assert len(server.requests) == 3
