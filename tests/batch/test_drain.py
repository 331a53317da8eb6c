"""``roost batch`` drains on SIGTERM as ``roost serve`` does: the rows running finish (within
``--grace``), no new row starts, the results say which rows did not run, and the next run of
the same command runs them. Each test sends the signal to a real ``roost batch`` process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from fakes.gauged import GaugedLLMServer
from fakes.script import FakeUsage, Reply

from roost.engine.runner import CANCELLED
from roost.store.sql import SqlStore
from tests.batch.conftest import jsonl, results

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_MAIN = "import sys; from roost.cli import main; main(sys.argv[1:])"

SLOW = """\
roost: 1
name: slow
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: sk-test, max_retries: 0}}
defaults: {{provider: llm}}
agents:
  USER: {{role: A person.}}
  bot: {{role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def slow_model(delay: float) -> GaugedLLMServer:
    """A fake model whose every answer, after ``delay`` seconds, ends the run."""
    return GaugedLLMServer(
        delay=delay, responder=lambda _: Reply(text="Done. TERMINATE", usage=FakeUsage())
    )


def wait_for(check: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s")
        time.sleep(0.05)
    return value


def batch_files(folder: Path, llm: GaugedLLMServer, rows: int) -> list[str]:
    (folder / "slow.yaml").write_text(SLOW.format(url=llm.url), encoding="utf-8")
    jsonl(folder / "q.jsonl", *({"message": f"question {n}"} for n in range(rows)))
    return ["batch", "slow.yaml", "q.jsonl", "--batch", "b1"]


def start(folder: Path, *args: str) -> subprocess.Popen[str]:
    """``roost ARGS`` as a child process in ``folder``, as a deploy script starts it."""
    return subprocess.Popen(
        [sys.executable, "-c", _MAIN, *args],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    assert "Traceback" not in out + err
    return process.returncode, out, err


def stored_events(folder: Path, run_id: str) -> list[dict[str, Any]]:
    store = SqlStore(str(folder / ".roost" / "roost.db"))
    try:
        return [json.loads(event.model_dump_json()) for event in store.log(run_id).load()]
    finally:
        store.close()


def test_sigterm_lets_the_rows_running_finish_and_starts_no_other(tmp_path: Path) -> None:
    with slow_model(1.5) as llm:
        command = batch_files(tmp_path, llm, rows=5)
        batch = start(tmp_path, *command, "--concurrency", "2", "--grace", "30")
        wait_for(lambda: llm.in_flight == 2)  # the first two rows are mid-call
        batch.send_signal(signal.SIGTERM)
        code, out, err = finish(batch)
        assert code == 3  # some rows did not run: run again
        assert "stopped (SIGTERM); run the same command again" in err
        assert "5 rows (3 skipped, 2 terminated); ran 2 now" in out
        lines = results(tmp_path / "q.jsonl.results.jsonl")
        assert [line["status"] for line in lines] == ["terminated"] * 2 + ["skipped"] * 3
        assert [line["final"] for line in lines[:2]] == ["Done."] * 2  # their answers kept
        assert all(line["run"] is None and "not run" in line["error"] for line in lines[2:])
        assert len(llm.requests) == 2  # no row started after the signal

        code, out, _ = finish(start(tmp_path, *command))
    assert code == 0 and "ran 3 now" in out  # the skipped rows, and only them
    again = results(tmp_path / "q.jsonl.results.jsonl")
    assert [line["status"] for line in again] == ["terminated"] * 5
    assert len(llm.requests) == 5  # the finished rows' calls were not made again


def test_past_the_grace_a_row_s_step_is_cancelled_and_retried_next_time(tmp_path: Path) -> None:
    with slow_model(4.0) as llm:
        command = batch_files(tmp_path, llm, rows=2)
        batch = start(tmp_path, *command, "--concurrency", "1", "--grace", "0.5")
        wait_for(lambda: llm.in_flight == 1)
        batch.send_signal(signal.SIGTERM)
        code, _, _ = finish(batch)
        assert code == 3
        first, second = results(tmp_path / "q.jsonl.results.jsonl")
        assert first["status"] == "error" and "cancelled" in first["error"]
        assert second["status"] == "skipped"
        errors = [e for e in stored_events(tmp_path, first["run"]) if e["type"] == "error"]
        assert [e["content"] for e in errors] == [CANCELLED]  # recorded as POST /cancel does

        code, out, _ = finish(start(tmp_path, *command))
    assert code == 0 and "ran 2 now" in out
    assert [line["status"] for line in results(tmp_path / "q.jsonl.results.jsonl")] == [
        "terminated",
        "terminated",
    ]
    assert len(llm.requests) == 3  # the cancelled call asked again, then the skipped row's


def test_a_second_sigterm_cuts_the_grace_short(tmp_path: Path) -> None:
    with slow_model(6.0) as llm:
        command = batch_files(tmp_path, llm, rows=1)
        batch = start(tmp_path, *command, "--grace", "60")
        wait_for(lambda: llm.in_flight == 1)
        batch.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        batch.send_signal(signal.SIGTERM)
        code, _, _ = finish(batch)
        assert llm.in_flight == 1  # the call was still running when the batch gave up on it
    assert code == 3
    (only,) = results(tmp_path / "q.jsonl.results.jsonl")
    assert only["status"] == "error" and "cancelled" in only["error"]
