"""What the run store costs: appends per second, per-message overhead, replay speed, size.

    python bench/store.py [--messages 2000] [--pg URL]

1. Events appended per second (one event per transaction, and batches of 10) to
   SQLite (WAL, synchronous=NORMAL) and to PostgreSQL (a throwaway server
   started with initdb/pg_ctl unless --pg names one; skipped with a note when
   neither is possible).
2. The engine's overhead per message with the store on: a two-agent chat on a
   scripted provider, with the log in memory and then in the SQLite store; the
   difference divided by the messages.
3. Replay of a recorded run of 10,000 events (loaded from the store, re-run
   against the record, compared).
4. Store size against the text of the messages, for 100, 500 and 2,000 messages
   of 200 characters.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import FlowRecord, MessageEvent, RunStartEvent
from roost.flow import load_flow_text
from roost.ports import EventLog, MemoryLog
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.flow.models import Flow

PAIR = """\
roost: 1
name: bench-pair
defaults: {{provider: mock, max_rounds: {n}}}
providers:
  mock: {{kind: scripted, replies: ["{reply}"], when_exhausted: repeat_last}}
agents:
  alice: {{role: You are Alice.}}
  bob: {{role: You are Bob.}}
start: {{from: alice, to: bob, content: Hello Bob.}}
"""


def pair_flow(messages: int, reply: str = "A short reply.") -> Flow:
    return load_flow_text(PAIR.format(n=messages, reply=reply), "bench-pair.yaml")


def appends_per_second(store: SqlStore, count: int, batch: int) -> float:
    """Events per second appended to a new run, ``batch`` events per transaction."""
    run = f"bench-{batch}-{time.monotonic_ns()}"
    log = store.new_log(run)
    record = FlowRecord(path="b.yaml", name="bench", hash="sha256:0", text="roost: 1")
    log.append([RunStartEvent(seq=0, run=run, ts="t", flow=record)])
    events = [
        MessageEvent.model_validate(
            {"seq": s, "run": run, "ts": "2026-01-01T00:00:00Z", "from": "a", "to": "b",
             "content": "A short reply."}
        )
        for s in range(1, count + 1)
    ]  # fmt: skip
    started = time.perf_counter()
    for index in range(0, count, batch):
        log.append(events[index : index + batch])
    return count / (time.perf_counter() - started)


async def run_pair(flow: Flow, log: EventLog) -> float:
    started = time.perf_counter()
    await Runner(flow=flow, log=log).start()
    return time.perf_counter() - started


def overhead_per_message(folder: Path, messages: int, repeat: int = 3) -> tuple[float, float]:
    """(µs per message in memory, µs per message with the SQLite store)."""
    flow = pair_flow(messages)
    memory = min(asyncio.run(run_pair(flow, MemoryLog(f"m{i}"))) for i in range(repeat))
    store = SqlStore(str(folder / "overhead.db"))
    stored = min(
        asyncio.run(run_pair(flow, store.new_log(f"s{i}-{time.monotonic_ns()}")))
        for i in range(repeat)
    )
    return memory / messages * 1e6, stored / messages * 1e6


def replay_seconds(folder: Path, events_wanted: int = 10_000) -> tuple[int, float, float]:
    """(events, seconds to load from the store, seconds to replay and compare)."""
    messages = events_wanted // 2  # each reply is an llm_call and a message
    flow = pair_flow(messages)
    store = SqlStore(str(folder / "replay.db"))
    log = store.new_log("replayed")
    asyncio.run(Runner(flow=flow, log=log).start())
    started = time.perf_counter()
    events = store.log("replayed").load()
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    report = asyncio.run(replay_run(flow, events))
    replayed = time.perf_counter() - started
    assert report.identical, report.difference
    return len(events), loaded, replayed


def size_figures(
    folder: Path, sizes: tuple[int, ...] = (100, 500, 2000)
) -> list[tuple[int, int, int, int]]:
    """(messages, text bytes, store bytes, events) per conversation length."""
    rows = []
    reply = "x" * 200
    for messages in sizes:
        path = folder / f"size{messages}.db"
        store = SqlStore(str(path))
        log = store.new_log("sized")
        asyncio.run(Runner(flow=pair_flow(messages, reply), log=log).start())
        events = log.load()
        text = sum(len(getattr(e, "content", "").encode()) for e in events if e.type == "message")
        store.close()
        with SqlStore(str(path)).engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.exec_driver_sql("VACUUM")
        rows.append((messages, text, path.stat().st_size, len(events)))
    return rows


@contextmanager
def postgres(url: str | None) -> Iterator[str | None]:
    """A PostgreSQL URL: the one given, or a throwaway server, or None when impossible."""
    if url:
        yield url
        return
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        yield None
        return
    bin_dir = Path(found[-1]).parent
    root = Path(tempfile.mkdtemp(prefix="roost-bench-pg-"))
    os.chmod(root, 0o755)
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = root / "data"
    quiet = {"check": True, "capture_output": True}
    subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust",
                    "-U", "roost"], **quiet)  # type: ignore[call-overload]  # fmt: skip
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1"
    subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w",
                    "-l", str(root / "log"), "start"], **quiet)  # type: ignore[call-overload]  # fmt: skip
    try:
        yield f"postgresql://roost@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast",
                        "stop"], capture_output=True)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--pg", help="a PostgreSQL URL (default: start a throwaway server)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        sqlite = SqlStore(str(folder / "appends.db"))
        print("appends (events/s)          1 per transaction   10 per transaction")
        print(f"  SQLite (WAL, NORMAL)      {appends_per_second(sqlite, args.appends, 1):>17,.0f}"
              f"   {appends_per_second(sqlite, args.appends, 10):>18,.0f}")  # fmt: skip
        with postgres(args.pg) as url:
            if url is None:
                print("  PostgreSQL                not measured (no server)")
            else:
                pg = SqlStore(url)
                one, ten = (appends_per_second(pg, args.appends, n) for n in (1, 10))
                print(f"  PostgreSQL                {one:>17,.0f}   {ten:>18,.0f}")
                pg.close()
        memory, stored = overhead_per_message(folder, args.messages)
        print(f"engine per message ({args.messages} messages): {memory:.0f} µs in memory, "
              f"{stored:.0f} µs with the SQLite store: "
              f"store overhead {stored - memory:.0f} µs")  # fmt: skip
        events, loaded, replayed = replay_seconds(folder)
        print(f"replay of {events} events: load {loaded:.2f} s, replay and compare "
              f"{replayed:.2f} s, total {loaded + replayed:.2f} s")  # fmt: skip
        print("store size   messages   text bytes   store bytes   store/text   events   "
              "bytes/event beyond 2 x text")  # fmt: skip
        for messages, text, size, count in size_figures(folder):
            ratio, fixed = size / text, (size - 2 * text) / count
            print(f"             {messages:>8}   {text:>10,}   {size:>11,}   {ratio:>10.2f}"
                  f"   {count:>6}   {fixed:>10.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
