"""Ctrl-C stops a run at once, wherever it is, and leaves a log that goes on cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

LONG = """\
roost: 1
name: long
defaults: {provider: m, max_rounds: 1000000}
providers:
  m: {kind: scripted, replies: ["hello"], when_exhausted: repeat_last}
agents:
  a: {role: A}
  b: {role: B}
start: {from: a, to: b, content: hi}
"""

SCRIPT = "from roost.entry import main; main()"


def _spawn(cwd: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _interrupt_after_first_line(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()  # the run has started and is speaking
    process.stdout.readline()
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    code = process.wait(timeout=30)
    assert time.monotonic() - started < 10, "Ctrl-C did not stop the run promptly"
    return code, process.stderr.read().decode()


def _seqs(path: Path) -> list[int]:
    return [json.loads(line)["seq"] for line in path.read_text().splitlines()]


def test_ctrl_c_stops_a_run_that_never_waits_and_retry_goes_on(tmp_path: Path) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    events = tmp_path / "run.jsonl"
    code, err = _interrupt_after_first_line(
        _spawn(tmp_path, "run", "long.yaml", "--no-input", "--events", "run.jsonl")
    )
    assert code == 1
    assert "Traceback" not in err
    assert "roost: interrupted; the run is saved. Resume it with: roost retry" in err
    first = _seqs(events)
    assert first == list(range(len(first)))

    code, err = _interrupt_after_first_line(_spawn(tmp_path, "retry", "run.jsonl"))
    assert code == 1, err
    assert "Traceback" not in err
    both = _seqs(events)
    assert both == list(range(len(both)))
    assert len(both) > len(first)


def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path) -> None:
    process = _spawn(tmp_path, "validate", "missing.yaml")
    time.sleep(0.15)  # the command line is still being imported
    process.send_signal(signal.SIGINT)
    code = process.wait(timeout=30)
    assert process.stderr is not None
    err = process.stderr.read().decode()
    assert "Traceback" not in err
    assert code in (130, -signal.SIGINT, 2), err  # 2: it was fast enough to finish first
