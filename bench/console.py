"""What printing a run costs per message: to a pipe (plain text) and through rich.

    python bench/console.py [--messages 5000] [--repeat 5]

A three-member round_robin channel on a scripted provider is run once in
memory, and everything the run hands to the console (its events and its
streamed text) is kept. Those calls are then made again, timed, on a
``RunConsole`` writing to a pipe that a ``cat`` process drains into
/dev/null, as ``roost run FLOW | cat`` would:

- **plain**: the console as ``roost run`` makes it when its output is not a
  terminal (plain text, flushed when the run waits or every 0.1 s);
- **rich**: the same console forced onto rich's path, as in a terminal, but
  still to the pipe and without colour (what every line cost before plain
  output existed).

Figures are microseconds per message, the best of ``--repeat`` tries, wall
and this process's CPU time (the pipe's reader runs in its own process).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from overhead import CHANNEL, make_flow  # the engine bench's flows, beside this file
from rich.console import Console

from roost.cli.console import RunConsole
from roost.cli.lines import PlainLines, RichLines
from roost.engine import Runner
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from roost.events import Event

Call = Callable[[RunConsole], None]


def record(messages: int) -> tuple[list[Call], int]:
    """The console calls of one run of the channel, and how many messages it made."""
    calls: list[Call] = []

    def on_event(event: Event) -> None:
        calls.append(lambda console: console.on_event(event))

    def on_text(node: str, chunk: str) -> None:
        calls.append(lambda console: console.on_text(node, chunk))

    flow = make_flow(CHANNEL, messages)
    runner = Runner(flow=flow, log=MemoryLog("bench"), on_event=on_event, on_text=on_text)
    state = asyncio.run(runner.start())
    return calls, len(state.history)


def timed(calls: list[Call], kind: str, stream: io.TextIOWrapper) -> tuple[float, float]:
    """Wall and CPU seconds to make ``calls`` on a console of ``kind`` writing to ``stream``."""
    rich = Console(file=stream, force_terminal=False, highlight=False, soft_wrap=True)
    console = RunConsole(rich, channels=["room"])
    console.lines = PlainLines(rich) if kind == "plain" else RichLines(rich)

    async def replay() -> tuple[float, float]:
        began, began_cpu = time.perf_counter(), time.process_time()
        for call in calls:
            call(console)
        console.flush()
        stream.flush()
        return time.perf_counter() - began, time.process_time() - began_cpu

    return asyncio.run(replay())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; best of {args.repeat}; load {load}")
    calls, count = record(args.messages)
    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert reader.stdin is not None
    stream = io.TextIOWrapper(reader.stdin, encoding="utf-8")
    try:
        for kind in ("plain", "rich"):
            runs = [timed(calls, kind, stream) for _ in range(args.repeat)]
            wall = min(r[0] for r in runs) / count * 1e6
            cpu = min(r[1] for r in runs) / count * 1e6
            print(f"{kind:6} {count:>7,} messages to a pipe {wall:7.1f} µs/message wall "
                  f"{cpu:7.1f} µs CPU", flush=True)  # fmt: skip
    finally:
        stream.close()
        reader.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
