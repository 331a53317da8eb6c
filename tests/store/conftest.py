"""Store test fixtures: a throwaway PostgreSQL server, and logs of every backend.

The server is started with the Debian binaries (initdb, pg_ctl) in a temporary
folder on a free port, as the ``postgres`` user when the tests run as root.
Missing binaries fail the tests: PostgreSQL support is tested for real.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from roost.errors import RunNotFoundError
from roost.eventlog import EventLog
from roost.events import Event, FlowRecord, MessageEvent, RunStartEvent
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_db_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A running PostgreSQL server's base URL (user roost, trust auth on 127.0.0.1)."""
    bin_dir = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="roost-pg-"))
    data = root / "data"
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()
    run = dict(check=True, capture_output=True, text=True)
    subprocess.run(
        _as_db_user([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "roost"]),
        **run,  # type: ignore[call-overload]
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        _as_db_user(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
             str(root / "log"), "start"]
        ),
        **run,  # type: ignore[call-overload]
    )  # fmt: skip
    try:
        yield f"postgresql://roost@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_db_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


_db_numbers = itertools.count()


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A fresh, empty database on the throwaway server."""
    import psycopg

    name = f"t{os.getpid()}_{next(_db_numbers)}"
    with psycopg.connect(f"{pg_server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{pg_server}/{name}"


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
