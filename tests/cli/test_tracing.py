"""Tracing a command's run: spans that cannot be sent are one line, and a run still runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import roost
from roost.store.jsonl import JsonlLog
from tests.fakes.traced_cli import cli as _cli
from tests.telemetry.receivers import HttpReceiver

if TYPE_CHECKING:
    import pytest


ROOT = Path(__file__).resolve().parents[2]


def test_spans_that_cannot_be_sent_are_one_line_and_a_failed_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(ROOT / "flows" / "hello.yaml", tmp_path / "hello.yaml")
    monkeypatch.chdir(tmp_path)
    roost.run_sync("hello.yaml", log=JsonlLog("run.jsonl", "hello-1"))
    with HttpReceiver() as receiver:
        closed = receiver.endpoint  # a port nothing listens on once the receiver is gone
    # Two seconds: the exporter retries a refused connection after about one (jittered),
    # and logs why only when that retry fits in its deadline.
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": closed, "OTEL_EXPORTER_OTLP_TIMEOUT": "2"}
    code, out, err = _cli(
        "export", "run.jsonl", "--otlp", env=env, monkeypatch=monkeypatch, capsys=capsys
    )
    assert (code, out) == (1, "")
    assert err.startswith(f"tracing: the spans were not sent to {closed}/v1/traces: ")
    assert "Connection refused" in err and len(err.splitlines()) == 1

    unknown = {"OTEL_TRACES_EXPORTER": "zipkin"}
    code, out, err = _cli(
        "export", "run.jsonl", "--otlp", env=unknown, monkeypatch=monkeypatch, capsys=capsys
    )
    assert (code, err) == (
        1,
        "tracing: OTEL_TRACES_EXPORTER: no installed package provides the 'zipkin' span "
        "exporter (for OTLP: pip install 'roost[otel]')\n",
    )
    # A run asked to be traced where it cannot be still runs, after one warning line.
    code, out, err = _cli("run", "hello.yaml", env=unknown, monkeypatch=monkeypatch, capsys=capsys)
    assert "terminated" in out and code == 0
    assert err == (
        "roost: warning: tracing: OTEL_TRACES_EXPORTER: no installed package provides the "
        "'zipkin' span exporter (for OTLP: pip install 'roost[otel]'); the run is not traced\n"
    )
