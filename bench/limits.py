"""How long roost takes to refuse hostile input, to give up, and to stop.

    python bench/limits.py [--repeat 5]

The test suite proves each of these happens (by what is built, recorded or
printed) but asserts no time, since a busy machine would make such a test fail
at random. The times are measured here instead:

1. Refusing a flow whose aliases would expand to billions of values (the
   "billion laughs").
2. Ctrl-C: from SIGINT to the exit of a ``roost run`` whose scripted run never
   waits for anything (the process's own shutdown included).
3. Two sync Python tools that each sleep 0.4 s, asked for in one round: the
   run's wall time, against the 0.8 s the calls would take one after another.
4. A model server that accepts the connection and never answers: the time to
   the error with the provider's ``timeout`` at 0.3 s and no retries.
5. A SQLite store locked by another connection: the time to the error with the
   store's timeout at 0.2 s.

Medians of ``--repeat`` runs, and the slowest.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.errors import FlowError, StoreError
from roost.events import MessageEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

LONG_RUN = """\
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

SLEEPY_TOOLS = '''\
import time


def nap(seconds: float) -> str:
    """Sleeps, then says so."""
    time.sleep(seconds)
    return "rested"
'''

TWO_NAPS = """\
roost: 1
name: naps
defaults: {provider: m}
providers:
  m:
    kind: scripted
    replies:
      - tool_calls:
          - {name: nap, arguments: {seconds: 0.4}}
          - {name: nap, arguments: {seconds: 0.4}}
      - TERMINATE
tools:
  nap: {python: "sleepy:nap"}
agents:
  a: {role: A, functions: [nap]}
  b: {role: B}
start: {from: b, to: a, content: rest twice}
"""

SILENT_SERVER = """\
roost: 1
name: silent
defaults: {provider: m}
providers:
  m: {kind: openai, model: m, base_url: "BASE", api_key: sk-bench, timeout: 0.3, max_retries: 0}
agents:
  a: {role: A}
  b: {role: B}
start: {from: b, to: a, content: "hello?"}
"""


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def report(what: str, times: list[float]) -> None:
    median, slowest = statistics.median(times), max(times)
    print(f"{what:<58} {median * 1000:>9.1f} ms  (slowest {slowest * 1000:.1f} ms)")


def billion_laughs() -> str:
    lines = ["roost: 1", "name: lol", "vars:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 30):
        lines.append(f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 8) + "]")
    return "\n".join(lines) + "\n"


def refused(text: str) -> Callable[[], None]:
    def load() -> None:
        try:
            load_flow_text(text, "bench.yaml", environ={})
        except FlowError:
            return
        raise AssertionError("the flow was not refused")

    return load


def ctrl_c(folder: Path) -> float:
    """Seconds from SIGINT to the exit of a busy ``roost run``."""
    (folder / "long.yaml").write_text(LONG_RUN)
    process = subprocess.Popen(
        [sys.executable, "-c", "from roost.entry import main; main()", "run", "long.yaml",
         "--no-input", "--events", "run.jsonl"],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    while not process.stdout.readline().decode().startswith("b → a:"):
        pass  # until a model reply is printed: the run is in its loop
    started = time.perf_counter()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=120)
    took = time.perf_counter() - started
    (folder / "run.jsonl").unlink()
    return took


def two_naps(folder: Path) -> None:
    (folder / "sleepy.py").write_text(SLEEPY_TOOLS)
    flow = load_flow_text(TWO_NAPS, str(folder / "naps.yaml"), environ={})
    asyncio.run(Runner(flow=flow, log=MemoryLog("naps")).start())


@contextmanager
def silent_server() -> Iterator[str]:
    """A server on 127.0.0.1 that accepts connections and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with suppress(OSError):
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        listener.close()
        for connection in held:
            connection.close()


def unanswered(base_url: str) -> Callable[[], None]:
    flow = load_flow_text(SILENT_SERVER.replace("BASE", base_url), "silent.yaml", environ={})

    def run() -> None:
        state = asyncio.run(Runner(flow=flow, log=MemoryLog("silent")).start())
        assert state.status == "error", state.status

    return run


def locked_store(folder: Path) -> Callable[[], None]:
    path = folder / "locked.db"
    store = SqlStore(str(path), timeout=0.2)
    flow = load_flow_text(LONG_RUN.replace("1000000", "2"), "short.yaml", environ={})
    run = asyncio.run(Runner(flow=flow, log=store.new_log("r")).start())
    assert run.status == "terminated"
    extra = MessageEvent.model_validate(
        {"seq": run.next_seq, "run": "r", "ts": "2026-01-01T00:00:00Z", "from": "a", "to": "b",
         "content": "one more"}
    )  # fmt: skip
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")

    def append() -> None:
        try:
            store.log("r").append([extra])
        except StoreError:
            return
        raise AssertionError("the locked store took the write")

    return append


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    repeat = args.repeat
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; load {load}")
    report("refuse a billion-laughs flow", timed(refused(billion_laughs()), repeat))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        report("Ctrl-C to exit, busy scripted run", [ctrl_c(folder) for _ in range(repeat)])
        naps = timed(lambda: two_naps(folder), repeat)
        report("two 0.4 s sync tools in one round, whole run", naps)
        with silent_server() as url:
            report("silent model server, timeout 0.3 s", timed(unanswered(url), repeat))
        report("locked SQLite store, timeout 0.2 s", timed(locked_store(folder), repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
