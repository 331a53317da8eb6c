"""How an answer ended, as a run sees it: recorded, shown, never read as a marker.

The flow is the end-to-end tests' adder: USER (who always answers) asks an
agent, whose model is the fake server through each backend.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cli_inprocess import run_cli
from fakes.script import Broken, Reply

from roost.engine import Runner
from roost.events import ErrorEvent, LlmCallEvent
from roost.flow import load_flow_text
from roost.flow.models import Flow
from roost.ports import MemoryLog

from .conftest import API_KEY, before_final

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

DATA = Path(__file__).parent / "data"
FLOW = DATA / "adder.yaml"
KIND_OF = {"chat": "openai", "responses": "openai-responses", "claude": "anthropic"}
# Each API's word for an answer cut at the output token limit.
CUT = {"chat": "length", "responses": "max_output_tokens", "claude": "max_tokens"}
PROVIDERS = list(KIND_OF)

LoadFlow = Callable[[str], Flow]


@pytest.fixture
def adder(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> LoadFlow:
    monkeypatch.setenv("FAKE_LLM_URL", server.url)
    monkeypatch.setenv("FAKE_LLM_KEY", API_KEY)

    def load(provider: str) -> Flow:
        text = FLOW.read_text().replace("provider: PROVIDER", f"provider: {provider}")
        return load_flow_text(text, str(FLOW))

    return load


def llm_calls(log: MemoryLog) -> list[LlmCallEvent]:
    return [e for e in log.load() if isinstance(e, LlmCallEvent)]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_answer_cut_at_max_tokens_is_recorded_and_is_no_marker(
    provider: str, adder: LoadFlow, server: FakeLLMServer
) -> None:
    server.script(Reply(text="TERMINATE", finish=CUT[provider]))
    log = MemoryLog("cut")
    state = await Runner(flow=adder(provider), log=log).start()
    # The model was stopped mid-answer: "TERMINATE" is where it got to, not what it meant.
    assert state.status == "paused" and "terminate" not in [e.type for e in log.load()]
    (call,) = llm_calls(log)
    assert call.response is not None
    assert call.response.finish_reason == CUT[provider] and call.response.cut is True


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_whole_answer_records_its_finish_reason_and_its_marker_counts(
    provider: str, adder: LoadFlow, server: FakeLLMServer
) -> None:
    server.script(Reply(text="TERMINATE"))
    log = MemoryLog("whole")
    state = await Runner(flow=adder(provider), log=log).start()
    assert state.status == "terminated"
    (call,) = llm_calls(log)
    finish = {"chat": "stop", "responses": "completed", "claude": "end_turn"}[provider]
    assert call.response is not None and call.response.finish_reason == finish
    assert "cut" not in call.response and "refused" not in call.response


async def test_a_cut_answer_of_an_agent_without_tools_is_no_marker_either(
    adder: LoadFlow, server: FakeLLMServer
) -> None:
    """An agent offered no tools makes one model call, not the tool loop: the same rule."""
    server.script(Reply(text="TERMINATE", finish="length"))
    flow = adder("chat")
    plain = flow.agents["adder"].model_copy(update={"functions": []})
    flow = flow.model_copy(update={"agents": {**flow.agents, "adder": plain}})
    log = MemoryLog("cut-plain")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "paused" and "terminate" not in [e.type for e in log.load()]
    (call,) = llm_calls(log)
    assert call.response is not None and not call.tools and call.response.cut is True


async def test_a_cut_answer_redone_after_a_stop_is_still_no_marker(
    adder: LoadFlow, server: FakeLLMServer
) -> None:
    """The process stopped right after recording the cut reply: the redo reads the record."""
    server.script(Reply(text="TERMINATE", finish="length"))
    log = MemoryLog("stopped")
    await Runner(flow=adder("chat"), log=log).start()
    events = log.load()
    assert events[-1].type == "interrupt" and events[-2].type == "message"
    stopped = MemoryLog("stopped", events[:-1])  # as if the process died before the pause
    state = await Runner(flow=adder("chat"), log=stopped).retry()
    assert state.status == "paused" and "terminate" not in [e.type for e in stopped.load()]


async def test_a_refusal_is_recorded_as_such(adder: LoadFlow, server: FakeLLMServer) -> None:
    server.script(Reply(refusal="I can't help with sums."))
    log = MemoryLog("refused")
    state = await Runner(flow=adder("chat"), log=log).start()
    assert state.history[-2].content == "I can't help with sums."
    (call,) = llm_calls(log)
    assert call.response is not None
    assert (call.response.finish_reason, call.response.refused) == ("stop", True)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_stream_cut_off_after_text_is_an_error_that_retry_redoes(
    provider: str, adder: LoadFlow, server: FakeLLMServer
) -> None:
    half = Reply(text="Hello! gpt-4o-mini ")
    server.script(Broken(half, after=before_final(KIND_OF[provider], half), how="close"))
    shown: list[str] = []
    log = MemoryLog("broken")
    runner = Runner(flow=adder(provider), log=log, on_text=lambda node, chunk: shown.append(chunk))
    state = await runner.start()
    assert "".join(shown) == half.text  # the person saw it: it is not silently asked again
    assert state.status == "error" and len(server.requests) == 1
    error = next(e for e in log.load() if isinstance(e, ErrorEvent))
    assert "ended the stream before the answer was complete" in error.content
    assert "cannot reach" not in error.content
    assert all(m.content != half.text for m in state.history)  # not stored as an answer
    server.script(Reply(text="2 + 3 = 5"))
    state = await Runner(flow=adder(provider), log=log).retry()
    assert state.status == "paused" and state.history[-2].content == "2 + 3 = 5"


def test_the_terminal_and_show_say_an_answer_was_cut(tmp_path: Path, server: FakeLLMServer) -> None:
    flow = tmp_path / "adder.yaml"
    flow.write_text(FLOW.read_text().replace("provider: PROVIDER", "provider: claude"))
    shutil.copy(DATA / "calc.py", tmp_path / "calc.py")
    env = {**os.environ, "FAKE_LLM_URL": server.url, "FAKE_LLM_KEY": API_KEY, "ROOST_DB": ""}
    server.script(Reply(text="2 + 3 = ", finish="max_tokens"))
    ran = run_cli("run", str(flow), "--no-input", "--events", "run.jsonl", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    said = next(n for n, line in enumerate(lines) if line.startswith("adder"))
    assert lines[said + 1] == "(adder: cut at max_tokens)"
    shown = run_cli("show", "run.jsonl", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "adder's answer: cut at max_tokens" in shown.stdout
