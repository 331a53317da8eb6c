"""Crash safety: a `roost run` killed with SIGKILL at random points leaves a clean, resumable run.

Each round starts a real process, waits until its JSON Lines copy holds a
random number of events (so the kill lands anywhere in the run, whatever the
start-up time), adds a random few milliseconds and kills it. Then the store
must open, hold a clean prefix of the run an uninterrupted process writes,
and `roost retry` must finish the run with every tool call answered.

The kill points come from a seed, printed first (pytest shows it with any
failure) and named in every assertion. ``ROOST_CRASH_SEED=N`` runs the same
targets again; the kill itself still lands where the child happens to be.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from roost.cli import main
from roost.engine import fold
from roost.engine.replay import comparable
from roost.errors import RunNotFoundError
from roost.events import Event, ToolCallEvent, ToolResultEvent
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from pathlib import Path

ROUNDS = 5

TOOLS = '''
import time


def slow(n: int) -> int:
    """Waits a little, then answers."""
    time.sleep(0.003)
    return n + 1
'''

FLOW = """\
roost: 1
name: crash
defaults: {provider: mock, max_rounds: 24}
providers:
  mock:
    kind: scripted
    when_exhausted: cycle
    replies:
      - tool_calls:
          - {id: c1, name: slow, arguments: {n: 1}}
          - {id: c2, name: slow, arguments: {n: 2}}
      - "a reply with some text in it"
      - "another reply"
tools:
  slow: {python: "crash_tools:slow", description: Waits a little}
agents:
  a: {functions: [slow]}
  b: {functions: [slow]}
start: {from: a, to: b, content: go}
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "crash_tools.py").write_text(TOOLS)
    (tmp_path / "crash.yaml").write_text(FLOW)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    return tmp_path


def cli(*args: str) -> int:
    """Runs the command line in this process; its exit status."""
    try:
        main(list(args))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def reference_run(folder: Path) -> list[Event]:
    """The events of the same flow run by a process nobody kills."""
    assert cli("run", "crash.yaml", "--no-input", "--db", str(folder / "reference.db")) == 0
    store = SqlStore(str(folder / "reference.db"))
    (run,) = store.runs()
    return store.log(run.id).load()


def kill_at_random(folder: Path, index: int, rng: random.Random, target: int) -> Path:
    """Starts `roost run` and SIGKILLs it once its event copy holds ``target`` lines."""
    copy = folder / f"events{index}.jsonl"
    db = folder / f"crash{index}.db"
    process = subprocess.Popen(
        [sys.executable, "-c", "from roost.cli import main; main()", "run", "crash.yaml",
         "--no-input", "--events", str(copy), "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if copy.exists() and copy.read_bytes().count(b"\n") >= target:
            time.sleep(rng.uniform(0, 0.02))
            break
        time.sleep(0.001)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return db


def test_killed_runs_leave_a_clean_resumable_prefix(folder: Path) -> None:
    seed = int(os.environ.get("ROOST_CRASH_SEED") or random.randrange(1_000_000))
    print(f"crash seed {seed} (ROOST_CRASH_SEED={seed} repeats these kill targets)")
    reference = reference_run(folder)
    rng = random.Random(seed)
    resumed = 0
    for index in range(ROUNDS):
        target = rng.randrange(1, len(reference))
        db = kill_at_random(folder, index, rng, target)
        note = f"seed {seed}, round {index}, target {target}"
        try:
            store = SqlStore(str(db), create=False)
            (run,) = store.runs()
        except (RunNotFoundError, ValueError):
            continue  # killed before the first step was stored
        events = store.log(run.id).load()
        assert [comparable(e) for e in events] == [
            comparable(e) for e in reference[: len(events)]
        ], note
        copy = JsonlLog(folder / f"events{index}.jsonl")
        copied = copy.load()
        assert len(copy.warnings) <= 1, note
        assert [comparable(e) for e in copied] == [comparable(e) for e in events[: len(copied)]], (
            note
        )
        if fold(events).status == "terminated":
            continue
        assert cli("retry", run.id, "--db", str(db)) == 0, note
        finished = store.log(run.id).load()
        assert fold(finished).status == "terminated", note
        assert [e.seq for e in finished] == list(range(len(finished))), note
        assert_every_tool_call_answered(finished, note)
        assert cli("replay", run.id, "--db", str(db)) == 0, note  # even the crash replays
        resumed += 1
    print(f"seed {seed}: {resumed} of {ROUNDS} killed runs resumed")
    assert resumed >= 1, f"seed {seed}: no round left a run to resume"


def assert_every_tool_call_answered(events: list[Event], note: str) -> None:
    open_calls: list[str] = []
    for event in events:
        if isinstance(event, ToolCallEvent):
            open_calls.append(event.id)
        elif isinstance(event, ToolResultEvent):
            assert event.id in open_calls, note
            open_calls.remove(event.id)
    assert open_calls == [], note


def test_a_tool_call_left_without_result_is_closed_on_retry(folder: Path) -> None:
    reference = reference_run(folder)
    cut = next(i for i, e in enumerate(reference) if isinstance(e, ToolCallEvent)) + 2
    store = SqlStore(str(folder / "cut.db"))
    store.import_events(reference[:cut])  # as a kill between the calls and their results
    run_id = reference[0].run
    assert fold(store.log(run_id).load()).status == "running"
    assert cli("retry", run_id, "--db", str(folder / "cut.db")) == 0
    events = store.log(run_id).load()
    closed = [e for e in events[cut:] if isinstance(e, ToolResultEvent)][:2]
    assert all(e.is_error and "stopped" in e.content for e in closed)
    assert_every_tool_call_answered(events, "cut run")
    assert fold(events).status == "terminated"
