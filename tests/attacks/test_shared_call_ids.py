"""Two tool calls of one answer that share an id are two calls.

A model (scripted here, or a real API behind the official SDKs, faked on
127.0.0.1) answers with two ``builtin#shell`` calls both numbered ``call_1``.
Before, the person was asked about the first only, both commands ran, one
``tool_call`` and two ``tool_result`` events with that id were recorded,
``roost show`` listed one call and replay diverged. Now the second gets an id
of its own: each is asked about, run (or refused) and recorded on its own, and
a replay rebuilds the same requests.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import FakeCall, Reply

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import InterruptEvent, ToolCallEvent, ToolResultEvent
from roost.flow import read_flow
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from roost.events import Event
    from tests.attacks.conftest import Cli

ONE = "echo one > one.txt; echo one"
TWO = "echo two > two.txt; echo two"
SCRIPTED = f"""\
roost: 1
name: twins
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - {{id: call_1, name: builtin__shell, arguments: {{command: "{ONE}"}}}}
          - {{id: call_1, name: builtin__shell, arguments: {{command: "{TWO}"}}}}
      - All done.
agents:
  user: {{interrupt: ALWAYS}}
  ops: {{provider: script, functions: [builtin#shell]}}
start: {{from: user, to: ops, content: Please run them.}}
"""
SERVED = """\
roost: 1
name: twins
providers:
  chat: {kind: openai, model: m, base_url: "${FAKE_LLM_URL}/v1", api_key: k, stream: STREAM}
  responses: {kind: openai-responses, model: m, base_url: "${FAKE_LLM_URL}/v1", api_key: k}
  claude: {kind: anthropic, model: m, base_url: "${FAKE_LLM_URL}", api_key: k}
agents:
  user: {interrupt: ALWAYS}
  ops: {provider: PROVIDER, functions: [builtin#shell]}
start: {from: user, to: ops, content: Please run them.}
"""


def _calls(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.id, e.arguments["command"]) for e in events if isinstance(e, ToolCallEvent)]


def _results(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.id, e.content) for e in events if isinstance(e, ToolResultEvent)]


def _asked(events: list[Event]) -> list[str]:
    return [
        str((e.tool_call or {})["arguments"]["command"])
        for e in events
        if isinstance(e, InterruptEvent) and e.reason == "tool_approval"
    ]


def _run_id(said: str) -> str:
    return said.split("roost continue ")[1].split()[0]


def test_each_of_two_calls_sharing_an_id_is_asked_run_and_recorded(
    cli: Cli, tmp_path: Path
) -> None:
    (tmp_path / "twins.yaml").write_text(SCRIPTED)
    run = _run_id(cli("run", "twins.yaml").out)
    first = cli("continue", run, "--answer", "yes")
    assert "echo two" in first.out and "answer yes to run it" in first.out  # asked again
    assert (tmp_path / "one.txt").exists() is False  # nothing runs before both are answered
    cli("continue", run, "--answer", "no, not that one")
    assert (tmp_path / "one.txt").read_text() == "one\n"
    assert not (tmp_path / "two.txt").exists()  # refused: it never ran
    events = [json.loads(line) for line in cli("export", run).out.splitlines()]
    calls = [(e["id"], e["arguments"]["command"]) for e in events if e["type"] == "tool_call"]
    assert calls == [("call_1", ONE), ("call_1_2", TWO)]
    results = {e["id"]: e["content"] for e in events if e["type"] == "tool_result"}
    assert results["call_1"] == "one\n[exit status 0]"
    assert "not that one" in results["call_1_2"]
    asked = [e["tool_call"]["id"] for e in events if e.get("reason") == "tool_approval"]
    assert asked == ["call_1", "call_1_2"]
    shown = cli("show", run).out
    assert "echo one" in shown and "echo two" in shown
    replayed = cli("replay", run)
    assert replayed.code == 0 and replayed.out.startswith("identical"), replayed.out


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.mark.parametrize(
    ("provider", "stream"),
    [("chat", "true"), ("chat", "false"), ("responses", "true"), ("claude", "true")],
)
async def test_a_real_api_answering_two_calls_under_one_id_gets_two_calls(
    provider: str,
    stream: str,
    fake: FakeLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_LLM_URL", fake.url)
    flow_file = tmp_path / "twins.yaml"
    flow_file.write_text(SERVED.replace("PROVIDER", provider).replace("STREAM", stream))
    twins = tuple(FakeCall("builtin__shell", {"command": c}, id="call_1") for c in (ONE, TWO))
    fake.script(Reply(calls=twins), Reply(text="All done."))
    flow = read_flow(flow_file)
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    await Runner(flow=flow, log=log).continue_("yes")
    assert _asked(log.load()) == [ONE, TWO]  # each asked about on its own
    await Runner(flow=flow, log=log).continue_("yes")
    events = log.load()
    assert (tmp_path / "one.txt").exists() and (tmp_path / "two.txt").exists()
    assert _calls(events) == [("call_1", ONE), ("call_1_2", TWO)]
    results = _results(events)
    assert results == [("call_1", "one\n[exit status 0]"), ("call_1_2", "two\n[exit status 0]")]
    # The model is told which result answers which call: each by its own id.
    assert _answered(fake.requests[1].body, provider) == {"call_1": "one", "call_1_2": "two"}
    assert (await replay_run(None, events)).identical


def _answered(body: dict[str, Any], provider: str) -> dict[str, str]:
    """Call id -> the first word of its result, as the second request sent them back."""
    if provider == "chat":
        pairs = [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    elif provider == "responses":
        items = body["input"]
        pairs = [(i["call_id"], i["output"]) for i in items if i["type"] == "function_call_output"]
    else:
        blocks = [
            b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
        ]
        pairs = [(b["tool_use_id"], b["content"]) for b in blocks if b["type"] == "tool_result"]
    return {call: _text(content).split()[0] for call, content in pairs}


def _text(content: Any) -> str:
    if isinstance(content, list):  # content blocks
        return "".join(part.get("text", "") for part in content)
    return str(content)
