"""SIGKILL at five chosen points of a run, each reached for certain rather than by chance.

A real ``roost`` process runs a flow whose model is the fake LLM server and
whose one tool is a gate the test opens; the test holds the process at one
point (a model request the server does not answer, a tool that waits, a row
or a file another process has locked) and kills it there with SIGKILL. Then
the log must load, ``retry`` or ``continue`` must finish the run, and no
event may be lost or written twice: everything written before the kill is
still there, in order, and the conversation is the one an unbroken run has.
(``tests/store/test_crash.py`` kills at random points; these are the points
where a step is half done.)
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import Broken, FakeCall, Reply

from roost.engine import fold
from roost.events import Event, MessageEvent, ToolCallEvent, ToolResultEvent
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore
from tests.store.conftest import pg_server, pg_url

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.attacks.conftest import Cli

__all__ = ["pg_server", "pg_url"]  # fixtures used by the tests below

FLOW = """\
roost: 1
name: killed
defaults: {max_rounds: 4}
providers:
  llm:
    kind: openai
    model: fake-model
    base_url: ${FAKE_LLM_URL}/v1
    api_key: ${FAKE_LLM_KEY}
    max_retries: 0
tools:
  gate: {python: "gate:wait", description: Waits until the test opens the gate}
agents:
  USER: {interrupt: ALWAYS}
  bot: {provider: llm, functions: [gate]}
start: {from: USER, to: bot, content: go}
"""
GATE = '''
import pathlib
import time

HERE = pathlib.Path(__file__).parent


def wait() -> str:
    """Waits until the gate is open."""
    (HERE / "entered").write_text("in")
    while not (HERE / "open").exists():
        time.sleep(0.01)
    return "passed"
'''
# The conversation an unbroken run has: the tool call, an answer, a pause, another answer.
CONVERSATION = [
    ("USER", "bot", "go"),
    ("bot", "USER", "first answer"),
    ("USER", "bot", "more"),
    ("bot", "USER", "second answer"),
]
TOOL_TURN = Reply(calls=(FakeCall("gate", {}, id="call-1"),))
FIRST, SECOND = Reply(text="first answer"), Reply(text="second answer")
KEY = "sk-fake-key-for-the-kill-tests"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def folder(
    tmp_path: Path, server: FakeLLMServer, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A folder with the flow and its gate, the gate open, the fake server's address set."""
    (tmp_path / "killed.yaml").write_text(FLOW)
    (tmp_path / "gate.py").write_text(GATE)
    (tmp_path / "open").write_text("")
    monkeypatch.setenv("FAKE_LLM_URL", server.url)
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    return tmp_path


def start(folder: Path, *args: str) -> subprocess.Popen[bytes]:
    """``roost ARGS`` in a process of its own, to be killed."""
    return subprocess.Popen(
        [sys.executable, "-c", "from roost.cli import main; main()", *args],
        cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


def kill_when(process: subprocess.Popen[bytes], reached: Callable[[], bool]) -> None:
    """SIGKILLs ``process`` as soon as ``reached()``; fails if it ends or never gets there."""
    deadline = time.monotonic() + 120
    while not reached():
        assert process.poll() is None, f"roost ended (status {process.returncode}) first"
        assert time.monotonic() < deadline, "roost never reached the point"
        time.sleep(0.002)
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL


def waits_for_flock(pid: int) -> Callable[[], bool]:
    """True once ``pid`` is blocked waiting for a flock (a ``->`` line of /proc/locks)."""
    return lambda: any(
        "->" in line and f" {pid} " in line for line in Path("/proc/locks").read_text().splitlines()
    )


def assert_whole(events: list[Event], before: list[Event]) -> None:
    """The finished run keeps ``before`` as it was, has no gap, and tells the conversation."""
    assert [e.model_dump_json() for e in events[: len(before)]] == [
        e.model_dump_json() for e in before
    ]
    assert [e.seq for e in events] == list(range(len(events)))
    said = [(e.from_, e.to, e.content) for e in events if isinstance(e, MessageEvent)]
    assert said == CONVERSATION
    calls = [e.id for e in events if isinstance(e, ToolCallEvent)]
    answered = [e.id for e in events if isinstance(e, ToolResultEvent)]
    assert sorted(calls) == sorted(answered) and len(set(answered)) == len(answered)
    assert fold(events).status == "terminated"


def assert_replays_unfinished(cli: Cli, run_id: str, before: list[Event]) -> None:
    """The killed run, not retried, replays identical up to its last event and says its
    last step was unfinished (rather than diverging at a call it never recorded)."""
    said = cli("replay", run_id, "--db", "r.db")
    assert said.code == 0, said.out + said.err
    assert said.out.splitlines() == [
        f"identical: {len(before)} events",
        "its last step was unfinished: the process stopped during it and the run was not "
        "retried (roost retry finishes it)",
    ]


def stored(db: str, run_id: str) -> list[Event]:
    store = SqlStore(db, create=False)
    try:
        return store.log(run_id).load()
    finally:
        store.close()


def only_run(db: str) -> str:
    store = SqlStore(db, create=False)
    try:
        (run,) = store.runs()
        return run.id
    finally:
        store.close()


def test_killed_during_a_model_call(folder: Path, server: FakeLLMServer, cli: Cli) -> None:
    server.script(TOOL_TURN, Broken(FIRST, after=0, how="stall", seconds=30))
    process = start(folder, "run", "killed.yaml", "--no-input", "--db", "r.db")
    kill_when(process, lambda: len(server.requests) == 2)  # the answer after the tool's
    run_id = only_run("r.db")
    before = stored("r.db", run_id)
    assert [e.type for e in before][-2:] == ["tool_call", "tool_result"]
    assert_replays_unfinished(cli, run_id, before)
    server.script(FIRST, SECOND)
    assert cli("retry", run_id, "--db", "r.db").code == 0
    assert cli("continue", run_id, "--answer", "more", "--db", "r.db").code == 0
    assert_whole(stored("r.db", run_id), before)
    assert len(server.requests) == 4  # the killed request asked again, once


def test_killed_during_a_tool_call(folder: Path, server: FakeLLMServer, cli: Cli) -> None:
    (folder / "open").unlink()
    server.script(TOOL_TURN)
    process = start(folder, "run", "killed.yaml", "--no-input", "--db", "r.db")
    kill_when(process, (folder / "entered").exists)
    run_id = only_run("r.db")
    before = stored("r.db", run_id)
    assert [e.type for e in before][-1] == "tool_call"  # written before the tool ran
    (folder / "open").write_text("")
    (folder / "entered").unlink()
    assert_replays_unfinished(cli, run_id, before)
    assert not (folder / "entered").exists()  # the replay ran no tool
    server.script(FIRST, SECOND)
    assert cli("retry", run_id, "--db", "r.db").code == 0
    assert cli("continue", run_id, "--answer", "more", "--db", "r.db").code == 0
    events = stored("r.db", run_id)
    assert_whole(events, before)
    (closed,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert closed.is_error and "stopped" in closed.content  # never run twice behind our back


@pytest.fixture
def paused(folder: Path, server: FakeLLMServer, cli: Cli) -> Callable[[str], list[Event]]:
    """Runs the flow to its pause in store ``db``, with a copy in run.jsonl; its events."""

    def run(db: str) -> list[Event]:
        server.script(TOOL_TURN, FIRST)
        ran = cli("run", "killed.yaml", "--no-input", "--events", "run.jsonl", "--db", db)
        assert ran.code == 0, ran.err
        events = JsonlLog(folder / "run.jsonl").load()
        assert fold(events).status == "paused" and stored(db, events[0].run) == events
        return events

    return run


def kill_with_row_locked(
    url: str, run_id: str, folder: Path, ref: str, reached: Callable[[], bool]
) -> None:
    """``roost continue REF`` killed at ``reached()`` while another session holds the run's
    row in the store, as a writer in the middle of its own transaction would."""
    with psycopg.connect(url) as lock:
        lock.execute("SELECT 1 FROM runs WHERE id = %s FOR UPDATE", (run_id,))
        process = start(folder, "continue", ref, "--answer", "more", "--no-input", "--db", url)
        kill_when(process, reached)
        lock.rollback()


def test_killed_between_a_message_and_the_next_model_call(
    folder: Path, server: FakeLLMServer, cli: Cli, paused: Callable[[str], list[Event]],
    pg_url: str,
) -> None:  # fmt: skip
    # Continuing through the file writes the file, then the stored copy, then asks the
    # model: with the stored copy's row locked, roost stops with the answer written.
    before = paused(pg_url)
    run_id = before[0].run

    def answer_written() -> bool:
        return len(JsonlLog(folder / "run.jsonl").load()) == len(before) + 2

    kill_with_row_locked(pg_url, run_id, folder, "run.jsonl", answer_written)
    written = JsonlLog(folder / "run.jsonl").load()
    assert [e.type for e in written[len(before) :]] == ["resume", "message"]
    assert len(server.requests) == 2  # no model asked yet
    assert stored(pg_url, run_id) == before  # the stored copy never got the step
    server.script(SECOND)
    resumed = cli("retry", "run.jsonl", "--db", pg_url)
    assert resumed.code == 0, resumed.err
    assert "only the file is written" in resumed.err  # the stored copy is left behind, whole
    assert_whole(JsonlLog(folder / "run.jsonl").load(), written)
    assert stored(pg_url, run_id) == before


def test_killed_inside_a_store_transaction(
    folder: Path, server: FakeLLMServer, cli: Cli, paused: Callable[[str], list[Event]],
    pg_url: str,
) -> None:  # fmt: skip
    before = paused(pg_url)
    run_id = before[0].run

    def inside_its_transaction() -> bool:
        with psycopg.connect(pg_url, autocommit=True) as watcher:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND state = 'active' AND datname = current_database()"
            ).fetchone()
        return row is not None and row[0] > 0

    kill_with_row_locked(pg_url, run_id, folder, run_id, inside_its_transaction)
    assert stored(pg_url, run_id) == before  # the half-done transaction left nothing
    assert len(server.requests) == 2
    server.script(SECOND)
    assert cli("continue", run_id, "--answer", "more", "--db", pg_url).code == 0
    assert_whole(stored(pg_url, run_id), before)


def test_killed_during_a_json_lines_append(
    folder: Path, server: FakeLLMServer, cli: Cli, paused: Callable[[str], list[Event]]
) -> None:
    before = paused("r.db")
    data = (folder / "run.jsonl").read_bytes()
    with (folder / "run.jsonl").open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as another writer of the file would
        process = start(folder, "continue", "run.jsonl", "--answer", "more", "--no-input",
                        "--db", "r.db")  # fmt: skip
        kill_when(process, waits_for_flock(process.pid))
    assert (folder / "run.jsonl").read_bytes() == data
    assert stored("r.db", before[0].run) == before
    server.script(SECOND)
    resumed = cli("continue", "run.jsonl", "--answer", "more", "--db", "r.db")
    assert (resumed.code, resumed.err) == (0, "")  # both copies still agree and both go on
    assert_whole(JsonlLog(folder / "run.jsonl").load(), before)
    assert stored("r.db", before[0].run) == JsonlLog(folder / "run.jsonl").load()
