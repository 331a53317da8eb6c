"""Where the time of one stored step goes, in the SQLite store.

    python bench/step.py [--messages 2000] [--repeat 3]

A three-member round_robin channel on a scripted provider is run in memory;
its steps (one ``select``, ``llm_call`` and ``message`` each) are then
appended again, timed, to fresh SQLite stores:

- **append**: ``SqlLog.append`` as the engine calls it, one transaction a step;
- **payloads**: the events turned into the JSON the store keeps;
- **checks and summary**: the batch checked (seq, run) and the run's cached
  status and counts worked out;
- **SQL, one commit a step**: the same two statements (move the run's row,
  insert the events) through the driver with the payloads made beforehand,
  committing each step, with ``synchronous`` at NORMAL (roost's setting), FULL
  and OFF;
- **SQL, one commit at the end**: the statements alone.

The commit's cost is the difference of the last two; what ``append`` adds in
Python is append less the SQL with a commit a step. Microseconds per step,
the best of ``--repeat`` tries, CPU time of this process and wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from overhead import CHANNEL, make_flow  # the engine bench's flows, beside this file

from roost.engine import Runner
from roost.events import Event, now_iso
from roost.ports import MemoryLog
from roost.store.sql import SqlStore
from roost.store.sqllog import payload
from roost.store.summary import summarize

Step = Sequence[Event]


def recorded_steps(messages: int) -> list[Step]:
    """The channel's events as the engine appended them: run start, then a step a message."""
    log = MemoryLog("bench")
    asyncio.run(Runner(flow=make_flow(CHANNEL, messages), log=log).start())
    events = log.load()
    return [events[:2]] + [events[i : i + 3] for i in range(2, len(events), 3)]


Timed = Callable[[], object]


def clock(prepare: Callable[[], Timed], repeat: int, steps: int) -> tuple[float, float]:
    """Best CPU and wall µs per step of what ``prepare()`` returns, over ``repeat`` tries."""
    cpu, wall = [], []
    for _ in range(repeat):
        action = prepare()  # a fresh store and the like, made before the clock starts
        began, began_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append((time.perf_counter() - began) / steps * 1e6)
        cpu.append((time.process_time() - began_cpu) / steps * 1e6)
    return min(cpu), min(wall)


def fresh_store(folder: Path) -> tuple[SqlStore, str]:
    path = folder / f"step-{time.monotonic_ns()}.db"
    return SqlStore(f"sqlite:///{path}"), str(path)


def appends(folder: Path, steps: list[Step]) -> Timed:
    store, _ = fresh_store(folder)
    log = store.new_log("bench")
    log.append(steps[0])  # the run's row, and the connection opened

    def run() -> None:
        for step in steps[1:]:
            log.append(step)

    return run


def bare(folder: Path, steps: list[Step], synchronous: str, *, each: bool = True) -> Timed:
    """The store's own statements on a connection of the driver, payloads made beforehand."""
    store, path = fresh_store(folder)
    store.new_log("bench").append(steps[0])  # the run's row
    sql = store.sql
    store.close()
    rows = [[("bench", e.seq, e.type, e.ts, payload(e)) for e in step] for step in steps[1:]]
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA synchronous={synchronous}")

    def run() -> None:
        cursor = connection.cursor()
        for batch in rows:
            first = batch[0][1]
            advance = (first + len(batch), None, 1, 0, 0, now_iso(), "bench", first)
            cursor.execute(sql.advance, advance)
            cursor.executemany(sql.insert_events, batch)
            if each:
                connection.commit()
        connection.commit()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}; "
          f"best of {args.repeat}; load {load}")  # fmt: skip
    steps = recorded_steps(args.messages)
    count = len(steps) - 1  # the timed steps: all but the run's first
    probe, _ = fresh_store(Path(tempfile.gettempdir()))
    checker = probe.new_log("bench")
    probe.close()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        figures: dict[str, Callable[[], Timed]] = {
            "append (SqlLog.append, a transaction a step)": lambda: appends(folder, steps),
            "payloads (the events' stored JSON)": lambda: (
                lambda: [[payload(e) for e in step] for step in steps[1:]]
            ),
            "checks and summary": lambda: (
                lambda: [(checker._check_batch(step), summarize(step)) for step in steps[1:]]
            ),
            "SQL, a commit a step, synchronous=NORMAL": lambda: bare(folder, steps, "NORMAL"),
            "SQL, a commit a step, synchronous=FULL": lambda: bare(folder, steps, "FULL"),
            "SQL, a commit a step, synchronous=OFF": lambda: bare(folder, steps, "OFF"),
            "SQL, one commit at the end": lambda: bare(folder, steps, "NORMAL", each=False),
        }
        for label, action in figures.items():
            cpu, wall = clock(action, args.repeat, count)
            print(f"{label:<46} {cpu:7.1f} µs CPU {wall:8.1f} µs wall   ({count:,} steps)",
                  flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
