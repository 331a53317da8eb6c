"""Spans over OTLP to a receiver on 127.0.0.1, from the command line.

``roost run`` sends a run's spans when the standard ``OTEL_*`` variables ask
for them (in a process of its own, as a user runs it: the last spans leave
when the process exits); ``roost export --otlp`` sends a stored run's spans
later, the same ones. The receivers decode what arrives with the protocol's
own messages.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import roost
from roost.store.jsonl import JsonlLog
from roost.telemetry.spans import spans_of
from tests.cli_process import run_cli
from tests.fakes.traced_cli import cli as _cli
from tests.telemetry.receivers import GrpcReceiver, HttpReceiver, ReceivedSpan

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]


def _env(**variables: str) -> dict[str, str]:
    """The environment with no OTEL_* variable of the test process's own, and ``variables``."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ROOST_OTEL"))}
    return {**kept, "PYTHONPATH": str(ROOT), **variables}


def _identity(span: ReceivedSpan) -> tuple[object, ...]:
    fields = ("name", "trace_id", "span_id", "parent_id", "start_ns", "end_ns", "status_code")
    return (*(getattr(span, name) for name in fields), tuple(sorted(span.attributes.items())))


def test_roost_run_sends_its_spans_and_export_sends_the_same_ones_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(ROOT / "flows" / "hello.yaml", tmp_path / "hello.yaml")
    with HttpReceiver() as receiver:
        env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, ROOST_OTEL_CONTENT="1")
        done = run_cli("run", "hello.yaml", "--events", "run.jsonl", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        live = list(receiver.spans)
    events = JsonlLog(tmp_path / "run.jsonl").load()
    run_id = events[0].run
    assert sorted(span.name for span in live) == [
        *["chat scripted"] * 5,
        *["invoke_agent USER"] * 2,
        *["invoke_agent assistant"] * 3,
        "invoke_workflow hello",
    ]
    assert {span.attributes["roost.run.id"] for span in live} == {run_id}
    assert {span.resource["service.name"] for span in live} == {"roost"}
    replies = [span for span in live if span.name.startswith("invoke_agent")]
    assert all("gen_ai.output.messages" in span.attributes for span in replies)

    # Later, from the stored file, over gRPC this time: the same spans, ids and all.
    monkeypatch.chdir(tmp_path)
    with GrpcReceiver() as receiver:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "ROOST_OTEL_CONTENT": "1",
        }
        code, out, err = _cli(
            "export", "run.jsonl", "--otlp", env=env, monkeypatch=monkeypatch, capsys=capsys
        )
        assert (code, out, err) == (0, f"sent 11 spans of run {run_id}\n", "")
        again = list(receiver.spans)
    assert {_identity(s) for s in again} == {_identity(s) for s in live}
    assert {(s.span_id, s.start_ns, s.end_ns) for s in again} == {
        (r.span_id, r.start_ns, r.end_ns) for r in spans_of(events)
    }


ASK = """
roost: 1
name: ask
providers:
  mock: {kind: scripted, replies: ["What is your name?", {error: the server is busy}]}
defaults: {provider: mock}
agents:
  USER: {role: A person., interrupt: ALWAYS}
  bot: {role: You ask.}
start: {from: USER, to: bot, content: Hello}
"""


def test_a_stored_run_that_paused_and_failed_is_sent_with_its_run_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ask.yaml").write_text(ASK)
    monkeypatch.chdir(tmp_path)

    async def paused_then_failed() -> None:
        flow = roost.load_flow("ask.yaml")
        state = await roost.Runner(flow=flow, log=JsonlLog("run.jsonl", "ask-1")).start()
        assert state.status == "paused"
        state = await roost.Runner(flow=flow, log=JsonlLog("run.jsonl")).continue_("Ann")
        assert state.status == "error"

    asyncio.run(paused_then_failed())
    with HttpReceiver() as receiver:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
        code, out, err = _cli(
            "export", "run.jsonl", "--otlp", env=env, monkeypatch=monkeypatch, capsys=capsys
        )
        assert (code, out, err) == (0, "sent 5 spans of run ask-1\n", "")
        spans = {span.name: span for span in receiver.spans}
    run = spans["invoke_workflow ask"]
    assert run.status_code == 2 and run.attributes["roost.run.status"] == "error"
    assert {"roost.interrupt", "roost.resume", "roost.error"} <= set(run.notes)
    bot = spans["invoke_agent bot"]
    assert bot.status_code == 2 and bot.parent_id == run.span_id
    assert "gen_ai.output.messages" not in bot.attributes  # contents were not asked for
