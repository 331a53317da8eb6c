"""Replay and the run store at scale: long runs replayed, many runs listed.

    python bench/scale.py [--runs 10000] [--events 25000,50000,100000]

1. ``roost runs`` over a store of ``--runs`` runs: the whole command in a fresh
   process, its output to a pipe, against the same command over a store of ten
   runs (what start-up costs); and ``SqlStore.runs()`` alone, in this process.
2. Replay of runs of about ``--events`` events (a two-agent chat on a scripted
   provider, stored in SQLite): loading the events from the store, then
   re-running and comparing them (``roost replay``'s work), in seconds and in
   microseconds per event, so that linear growth shows as a flat last column.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from overhead import PAIR  # the two-agent flow overhead.py measures (bench/ is on sys.path)

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import FlowRecord, MessageEvent, RunStartEvent, TerminateEvent
from roost.flow import load_flow_text
from roost.store.sql import SqlStore

ROOST = [sys.executable, "-c", "from roost.cli import main; main()"]


def fill(store: SqlStore, runs: int) -> None:
    """``runs`` small finished runs (start, a message, the end), one transaction each."""
    record = FlowRecord(path="f.yaml", name="bench", hash="sha256:0", text="roost: 1")
    stamp = "2026-01-01T00:00:00.000000Z"
    for number in range(runs):
        run = f"20260101-000000-{number:06x}"
        common = {"run": run, "ts": stamp}
        message = {"from": "a", "to": "b", "content": "hello", **common}
        store.new_log(run).append(
            [
                RunStartEvent(seq=0, flow=record, **common),
                MessageEvent.model_validate({"seq": 1, **message}),
                TerminateEvent(seq=2, node="b", reason="done", **common),
            ]
        )


def command_seconds(db: Path, repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``roost runs --db DB`` in a fresh process, to a pipe."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([*ROOST, "runs", "--db", str(db)], capture_output=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        assert done.returncode == 0, done.stderr
    return statistics.median(walls), statistics.median(cpus)


def listing(folder: Path, runs: int, repeat: int) -> None:
    few, many = folder / "few.db", folder / "many.db"
    fill(SqlStore(str(few)), 10)
    began = time.perf_counter()
    store = SqlStore(str(many))
    fill(store, runs)
    print(f"store of {runs:,} runs made in {time.perf_counter() - began:.1f} s")
    began = time.perf_counter()
    listed = store.runs()
    print(f"SqlStore.runs() over {len(listed):,} runs: {time.perf_counter() - began:.3f} s")
    for label, db in (("10 runs", few), (f"{runs:,} runs", many)):
        wall, cpu = command_seconds(db, repeat)
        print(f"roost runs over {label}: {wall:.3f} s wall, {cpu:.3f} s CPU "
              f"(median of {repeat} fresh processes, output to a pipe)")  # fmt: skip


def replay(folder: Path, sizes: list[int]) -> None:
    print("events     load s   replay s   total s   µs/event   CPU µs/event")
    store = SqlStore(str(folder / "replay.db"))
    for wanted in sizes:
        flow = load_flow_text(PAIR.format(n=wanted // 2), "pair.yaml", environ={})
        run = f"replay-{wanted}"
        asyncio.run(Runner(flow=flow, log=store.new_log(run)).start())
        began, began_cpu = time.perf_counter(), time.process_time()
        events = store.log(run).load()
        loaded = time.perf_counter() - began
        began = time.perf_counter()
        report = asyncio.run(replay_run(None, events))
        replayed = time.perf_counter() - began
        assert report.identical, report.difference
        total, cpu = loaded + replayed, time.process_time() - began_cpu
        print(f"{len(events):>7,}   {loaded:7.2f}   {replayed:8.2f}   {total:7.2f}   "
              f"{total / len(events) * 1e6:8.1f}   {cpu / len(events) * 1e6:12.1f}",
              flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--events", default="25000,50000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; load {load}")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        listing(folder, args.runs, args.repeat)
        replay(folder, [int(size) for size in args.events.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
