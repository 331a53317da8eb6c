"""The engine's own cost per message, with the model taken out of the picture.

Two scenarios on scripted providers: a three-member round_robin channel and a
chat between two agents, each run to 200, 2,000 and 10,000 messages. The
figures are microseconds per message of ``Runner.start`` (flow loading, imports
and start-up excluded; wall-clock time and this process's CPU time, which a
busy machine disturbs less), first with the log in memory, then with the JSON Lines
log written to disk; a second pass under ``tracemalloc`` gives peak memory.

Start-up stays out of the figures in two ways: the clock runs only around the
awaited ``start()`` inside an event loop made beforehand, and the objects that
exist before the run (the interpreter's, the libraries', the flow) are frozen
with ``gc.freeze()`` as a long-running process would after loading, so the
garbage collector's passes over them are not charged to the engine. The
collector's passes over the run's own objects are counted.

    python bench/overhead.py [--sizes 200,2000,10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from roost.engine import Runner
from roost.flow.models import Flow
from roost.ports import EventLog, MemoryLog
from roost.store.jsonl import JsonlLog

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

CHANNEL = """
roost: 1
name: bench-channel
defaults: {{provider: mock, max_rounds: {n}}}
providers:
  mock: {{kind: scripted, replies: ["A short reply."], when_exhausted: repeat_last}}
agents:
  alice: {{role: You are Alice.}}
  bob: {{role: You are Bob.}}
  carol: {{role: You are Carol.}}
  USER: {{role: A person.}}
channels:
  room:
    members: [alice, bob, carol]
    max_rounds: {n}
    director: {{strategy: round_robin}}
start: {{from: USER, to: room, content: Let us talk.}}
"""

# The channel with a route on every member's turn (text conditions, one of each kind of
# combinator): what routing adds to a step, against CHANNEL's cost.
ROUTED = CHANNEL.replace(
    "    director: {{strategy: round_robin}}\n",
    """    director: {{strategy: round_robin}}
    transitions:
      alice: [{{to: bob, when: {{contains: short}}}}, carol]
      bob: [{{to: carol, when: {{matches: "re?ply"}}}}]
      carol: [{{to: alice, when: {{not: {{equals: stop}}}}}}]
""",
).replace("name: bench-channel", "name: bench-routed")

PAIR = """
roost: 1
name: bench-pair
defaults: {{provider: mock, max_rounds: {n}}}
providers:
  mock: {{kind: scripted, replies: ["A short reply."], when_exhausted: repeat_last}}
agents:
  alice: {{role: You are Alice.}}
  bob: {{role: You are Bob.}}
start: {{from: alice, to: bob, content: Hello Bob.}}
"""


def make_flow(template: str, messages: int) -> Flow:
    # The channel's cap counts member messages; the start message comes from a non-member.
    return Flow.model_validate(yaml.safe_load(template.format(n=messages)))


def run_once(flow: Flow, log: EventLog) -> tuple[float, float, int]:
    """Wall and CPU seconds spent in Runner.start, and the number of messages it produced."""
    runner = Runner(flow=flow, log=log)
    loop = asyncio.new_event_loop()

    async def timed() -> tuple[float, float, int]:
        began, began_cpu = time.perf_counter(), time.process_time()
        state = await runner.start()
        elapsed, cpu = time.perf_counter() - began, time.process_time() - began_cpu
        assert state.status == "terminated", state.status
        return elapsed, cpu, len(state.history)

    try:
        with _frozen_heap():
            return loop.run_until_complete(timed())
    finally:
        loop.close()


def peak_memory(flow: Flow, make_log: Callable[[], EventLog]) -> int:
    """Peak bytes allocated during one run (tracemalloc)."""
    log = make_log()
    runner = Runner(flow=flow, log=log)
    loop = asyncio.new_event_loop()
    try:
        with _frozen_heap():
            tracemalloc.start()
            loop.run_until_complete(runner.start())
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
    finally:
        loop.close()
    return peak


@contextmanager
def _frozen_heap() -> Iterator[None]:
    # What exists before the run is start-up: collected once, then out of the collector's way.
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.collect()


def measure(sizes: list[int], repeat: int) -> list[tuple[str, str, int, float, float, float]]:
    """Rows of (scenario, log, messages, wall µs and CPU µs per message, peak MiB)."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        counter = iter(range(10**9))

        def memory_log() -> EventLog:
            return MemoryLog("bench")

        def jsonl_log() -> EventLog:
            return JsonlLog(Path(folder) / f"run-{next(counter)}.jsonl", "bench")

        for scenario, template in (("channel", CHANNEL), ("pair", PAIR)):
            for size in sizes:
                flow = make_flow(template, size)
                for label, make_log in (("memory", memory_log), ("jsonl", jsonl_log)):
                    # Small runs are over in milliseconds, so one hiccup of a busy machine
                    # would decide them: they get more tries (at least 10,000 messages' worth).
                    tries = max(repeat, 10_000 // size)
                    runs = [run_once(flow, make_log()) for _ in range(tries)]
                    count = runs[0][2]
                    wall = min(r[0] for r in runs) / count * 1e6
                    cpu = min(r[1] for r in runs) / count * 1e6
                    peak = peak_memory(flow, make_log) / 2**20
                    rows.append((scenario, label, count, wall, cpu, peak))
                    print(
                        f"{scenario:8} {label:7} {count:>7,} messages "
                        f"{wall:7.1f} µs/message wall {cpu:7.1f} µs CPU  peak {peak:7.2f} MiB",
                        flush=True,
                    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000,10000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(part) for part in args.sizes.split(",")]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; best of {args.repeat} or more runs; load {load}")
    measure(sizes, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
