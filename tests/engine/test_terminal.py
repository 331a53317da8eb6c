"""roost run in a terminal: the person is asked at each interrupt; Ctrl-C leaves the run paused."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.engine.test_cli import ASK

CODE = "import sys; from roost.cli import main; main(sys.argv[1:])"


def read_until(fd: int, marker: str, timeout: float = 240.0) -> str:
    """Terminal output until ``marker`` appears (or the timeout)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    return seen


def spawn(args: list[str], cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-c", CODE, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    return process, master


def test_a_terminal_asks_names_who_waits_and_takes_the_answer(tmp_path: Path) -> None:
    flow = tmp_path / "ask.yaml"
    flow.write_text(ASK.replace("five, TERMINATE", "five, six, seven, TERMINATE"))
    events = tmp_path / "run.jsonl"
    process, master = spawn(["run", str(flow), "--events", str(events)], tmp_path)
    try:
        shown = read_until(master, "> ")
        assert "bot waits for USER" in shown, shown
        os.write(master, b"thanks a lot\r")
        shown = read_until(master, "> ")
        os.write(master, b"\r")  # Enter: USER answers by itself
        shown += read_until(master, "> ")
        process.send_signal(signal.SIGINT)  # Ctrl-C at the prompt
        shown += read_until(master, "continue with")
        assert process.wait(timeout=240) == 0, shown
    finally:
        process.kill()
        os.close(master)
    assert "Traceback" not in shown
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    said = [e["content"] for e in lines if e["type"] == "message"]
    assert said == ["2 + 2?", "four", "thanks a lot", "own words", "five", "six"], shown
    assert lines[-1]["type"] == "interrupt"  # left paused, resumable
