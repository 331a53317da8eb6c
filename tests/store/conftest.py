"""Store test fixtures: a throwaway PostgreSQL server, logs of every backend, the command line.

The server (see ``tests/postgres.py``) is started once per process, each xdist
worker having its own; each test gets a fresh database on it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pytest

from roost.cli import main
from roost.errors import RunNotFoundError
from roost.events import Event, FlowRecord, MessageEvent, RunStartEvent
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore
from tests.postgres import SERVER, fresh_database

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from roost.ports import EventLog


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A running PostgreSQL server's base URL (user roost, trust auth on 127.0.0.1)."""
    with SERVER.use() as url:
        yield url


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A fresh, empty database on the throwaway server."""
    return fresh_database(pg_server)


BACKENDS = ["jsonl", "sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], EventLog]]:
    """A factory of logs (by run id) of one backend; each call opens the log afresh."""
    if request.param == "jsonl":
        yield lambda run_id: JsonlLog(tmp_path / f"{run_id}.jsonl", run_id)
        return
    url = (
        str(tmp_path / "roost.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    stores: list[SqlStore] = []

    def open_log(run_id: str) -> EventLog:
        store = SqlStore(url)
        stores.append(store)
        try:
            return store.log(run_id)
        except RunNotFoundError:
            return store.new_log(run_id)

    yield open_log
    for store in stores:
        store.close()


def start_event(run: str, text: str = "roost: 1\nname: f\n") -> RunStartEvent:
    return RunStartEvent(
        seq=0,
        run=run,
        ts="2026-01-01T00:00:00Z",
        flow=FlowRecord(path="f.yaml", name="f", hash="sha256:0", text=text),
    )


def message(seq: int, run: str, content: str = "hi") -> MessageEvent:
    return MessageEvent.model_validate(
        {"seq": seq, "run": run, "ts": f"2026-01-01T00:00:00.{seq:06d}Z", "from": "a", "to": "b",
         "content": content}
    )  # fmt: skip


def run_events(run: str, count: int) -> list[Event]:
    """A run_start followed by ``count - 1`` messages."""
    return [start_event(run), *(message(seq, run, f"m{seq}") for seq in range(1, count))]


# --------------------------------------------------------------------------- command line

CHAT = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 8}
providers:
  mock:
    kind: scripted
    replies: ["one", "two", "INTERRUPT", "three", {error: boom}, "four", "five"]
agents:
  writer: {role: You write.}
  critic: {role: You criticise.}
start: {from: critic, to: writer, content: Write a poem}
"""


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def roost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Runs the roost command line in a fresh folder; returns code, stdout and stderr."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "chat.yaml").write_text(CHAT)

    def invoke(*args: str, stdin: str = "") -> Result:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = 0
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def finished_run(roost) -> str:  # type: ignore[no-untyped-def]
    """A run paused once, failed once, retried and terminated; its id."""
    started = roost("run", "chat.yaml", "--answer", "shorter please")
    run_id = started.out.split()[1]
    assert roost("retry", run_id).code == 0
    return run_id
