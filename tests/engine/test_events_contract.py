"""The events as JSON Lines: field names of section 7, seq and ts, cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from typing import TYPE_CHECKING

from roost.engine import Runner, fold
from roost.engine.sources import Sources
from roost.events import event_json
from roost.ports import MemoryLog
from roost.store.jsonl import JsonlLog
from tests.engine.conftest import make_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.messages import ModelRequest, ModelResponse
    from roost.providers.base import TextCallback

CHANNEL = """
roost: 1
name: contract
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [one, INTERRUPT, {error: boom}, two, TERMINATE]}
agents:
  a: {role: a}
  b: {role: b}
  USER: {role: u}
channels:
  room: {members: [a, b], max_rounds: 9, director: {strategy: round_robin}}
start: {from: USER, to: room, content: go}
"""

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
FIELDS = {
    "run_start": {"flow"},
    "message": {"from", "to", "content", "state"},
    "interrupt": {"from", "to", "state"},
    "error": {"from", "to", "content", "state"},
    "terminate": {"node"},
    "resume": {"from", "to", "feedback"},
    "retry": {"from", "to"},
    "select": {"channel", "candidates", "chosen", "by"},
    # Every field of the contract's table is written, null when it has no value.
    "llm_call": {
        *("node", "provider", "model", "tools", "request_digest", "response", "usage", "error"),
    },
}


async def test_every_event_has_the_contract_fields(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    flow = make_flow(CHANNEL)
    state = await Runner(flow=flow, log=JsonlLog(path, "run-1")).start()
    assert state.status == "paused"
    state = await Runner(flow=flow, log=JsonlLog(path)).continue_("")
    assert state.status == "error"
    state = await Runner(flow=flow, log=JsonlLog(path)).retry()
    assert state.status == "terminated"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["seq"] for line in lines] == list(range(len(lines)))
    seen = set()
    for line in lines:
        seen.add(line["type"])
        assert line["run"] == "run-1"
        assert ISO_UTC.match(line["ts"]), line["ts"]
        assert FIELDS[line["type"]] <= set(line), line
        if line["type"] == "llm_call":
            assert line["request_digest"].startswith("sha256:")
            failed = line["error"] is not None
            assert failed == (line["response"] is None) == (line["usage"] is None), line
            assert failed or line["usage"]["prompt_tokens"] == 0
    assert seen == set(FIELDS)
    flow_record = lines[0]["flow"]
    assert flow_record["name"] == "contract" and flow_record["hash"].startswith("sha256:")
    assert fold(JsonlLog(path).load()) == state


async def test_the_digest_changes_with_the_history_and_is_repeatable() -> None:
    text = CHANNEL.replace("[one, INTERRUPT, {error: boom}, two, TERMINATE]", "[x, y, z]")
    text = text.replace("max_rounds: 9", "max_rounds: 3")
    digests = []
    for _ in range(2):
        log = MemoryLog("r")
        await Runner(flow=make_flow(text), log=log).start()
        digests.append([e.request_digest for e in log.load() if e.type == "llm_call"])
    assert digests[0] == digests[1]
    assert len(set(digests[0])) == len(digests[0])


class StuckProvider:
    """A provider whose call never ends; ``called`` is set once a call is under way."""

    name = "mock"
    model = "stuck"

    def __init__(self) -> None:
        self.called = asyncio.Event()

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        self.called.set()
        await asyncio.Event().wait()  # nothing ever sets it: only cancelling ends the call
        raise AssertionError("unreachable")


async def test_a_run_cancelled_during_a_model_call_is_retried_cleanly() -> None:
    log = MemoryLog("r")
    flow = make_flow(CHANNEL)
    stuck = StuckProvider()
    runner = Runner(flow=flow, log=log, sources=Sources(providers=lambda name: stuck))
    task = asyncio.create_task(runner.start())
    called = asyncio.create_task(stuck.called.wait())
    await asyncio.wait([task, called], return_when=asyncio.FIRST_COMPLETED)
    assert stuck.called.is_set(), "the run ended before calling the model"
    task.cancel()  # the model call is under way: cancel it there
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert fold(log.load()).status == "running"
    assert [e.type for e in log.load()] == ["run_start", "message", "select"]
    state = await Runner(flow=flow, log=log).retry()
    # a's call is redone (one), then b says INTERRUPT: the run waits for the channel's answer.
    assert state.status == "paused"
    assert [(e.from_, e.content) for e in log.load() if e.type == "message"] == [
        ("USER", "go"),
        ("a", "one"),
        ("b", "INTERRUPT"),
    ]
    assert log.load()[3].type == "retry"
    assert [e.seq for e in log.load()] == list(range(len(log.load())))
    assert all(event_json(e) for e in log.load())
