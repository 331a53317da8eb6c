"""One flow with a tool, run by the engine against each fake backend and a fallback chain."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fakes.script import FakeCall, Reply, Status, Thinking

from roost.engine import Runner
from roost.events import event_json
from roost.flow import load_flow_text
from roost.flow.models import Flow
from roost.ports import MemoryLog

from .conftest import API_KEY

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

LoadFlow = Callable[[str], Flow]
FLOW = Path(__file__).parent / "data" / "adder.yaml"
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "claude": "/v1/messages"}


@pytest.fixture
def adder(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> LoadFlow:
    monkeypatch.setenv("FAKE_LLM_URL", server.url)
    monkeypatch.setenv("FAKE_LLM_KEY", API_KEY)

    def load(provider: str) -> Flow:
        text = FLOW.read_text().replace("provider: PROVIDER", f"provider: {provider}")
        return load_flow_text(text, str(FLOW))

    return load


def tool_turn() -> list[Reply]:
    return [
        Reply(
            calls=(FakeCall("add", {"a": 2, "b": 3}, id="c1"),), thinking=(Thinking("sum", "S"),)
        ),
        Reply(text="2 + 3 = 5"),
    ]


@pytest.mark.parametrize("provider", ["chat", "responses", "claude"])
async def test_flow_with_a_tool_runs_on_each_backend(
    provider: str,
    adder: LoadFlow,
    server: FakeLLMServer,
) -> None:
    server.script(*tool_turn())
    log = MemoryLog("run-1")
    shown: list[str] = []
    runner = Runner(flow=adder(provider), log=log, on_text=lambda node, chunk: shown.append(chunk))
    state = await runner.start()
    assert state.status == "paused"  # USER answers next
    assert state.history[-2].content == "2 + 3 = 5"
    assert "".join(shown) == "2 + 3 = 5"
    events = log.load()
    types = [e.type for e in events]
    assert types.count("llm_call") == 2 and "tool_call" in types
    result = next(e for e in events if e.type == "tool_result")
    assert result.content == "5" and not result.is_error
    calls = [e for e in events if e.type == "llm_call"]
    assert all(c.attempts and c.attempts[-1].outcome == "ok" for c in calls)
    assert calls[0].response and calls[0].response.reasoning  # thinking recorded in the event
    assert [r.path for r in server.requests] == [PATHS[provider]] * 2
    second = str(server.requests[1].body)
    assert "'5'" in second and "c1" in second  # the tool result went back, paired
    sent_back = {
        "chat": "'reasoning_content': 'sum'",
        "responses": "'encrypted_content': 'S'",
        "claude": "'signature': 'S'",
    }
    assert sent_back[provider] in second  # reasoning went back within the tool loop
    assert all(API_KEY not in event_json(e) for e in events)


async def test_fallback_chain_answers_when_the_primary_fails(
    adder: LoadFlow,
    server: FakeLLMServer,
) -> None:
    first, second = tool_turn()
    server.script(Status(500), first, Status(500), second)
    log = MemoryLog("run-2")
    state = await Runner(flow=adder("flaky"), log=log).start()
    assert state.history[-2].content == "2 + 3 = 5"
    assert [r.path for r in server.requests] == [
        "/v1/chat/completions",
        "/v1/messages",
        "/v1/chat/completions",
        "/v1/messages",
    ]
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert [(a.provider, a.outcome) for a in calls[0].attempts] == [
        ("flaky", "http 500"),
        ("claude", "ok"),
    ]
    # Claude's thinking was sent back to Claude within the tool loop.
    assistant = server.requests[3].body["messages"][1]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "sum", "signature": "S"}


async def test_failed_provider_stops_the_run_and_retry_resumes_it(
    adder: LoadFlow,
    server: FakeLLMServer,
) -> None:
    server.script(Status(401, f"bad key {API_KEY}", "authentication_error"))
    log = MemoryLog("run-3")
    runner = Runner(flow=adder("chat"), log=log)
    state = await runner.start()
    assert state.status == "error"
    error = state.history[-1]
    assert "HTTP 401" in error.content and "FAKE_LLM_KEY" not in error.content
    assert all(API_KEY not in event_json(e) for e in log.load())
    server.script(*tool_turn())
    state = await Runner(flow=adder("chat"), log=log).retry()
    assert state.status == "paused" and state.history[-2].content == "2 + 3 = 5"
