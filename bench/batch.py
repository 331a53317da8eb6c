"""What a batch costs: rows a second with roost batch, on Ray, and through the Python API.

    python bench/batch.py [--rows 10000] [--concurrency 64] [--repeat 2]
                          [--ray-rows 2000] [--no-ray]

Every row runs a two-reply flow on the scripted provider (the bot echoes the
row's message, the person ends the run) and is stored in a SQLite store of its
own for each measure:

1. ``roost batch FLOW INPUTS --concurrency N``, as a user runs it (a child
   process: its start-up, reading the inputs, the progress bar and the results
   file count).
2. The same runs through the Python API in one process: ``Runner.start`` for one
   row after another, each in the store. The difference divided by the rows is
   what ``roost batch`` adds to a row.
3. ``roost batch ... --ray``: a Ray instance started on this machine for the
   batch (its start counts), the rows as Ray tasks writing to the same kind of
   store.

The first two take turns ``--repeat`` times and the best of each is kept: on a
shared machine the load changes from one minute to the next.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.store.sql import SqlStore

TWO = """\
roost: 1
name: two
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{echo: last}, TERMINATE]}
agents:
  USER: {role: A person asking.}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: Hello.}
"""
ROOST = "import sys; from roost.cli import main; main(sys.argv[1:])"


def write_inputs(folder: Path, rows: int) -> Path:
    (folder / "two.yaml").write_text(TWO)
    inputs = folder / "q.jsonl"
    with inputs.open("w") as out:
        for row in range(rows):
            out.write(json.dumps({"message": f"Question {row}?"}) + "\n")
    return inputs


def roost_batch(rows: int, *options: str) -> float:
    """Seconds ``roost batch`` takes for ``rows`` rows, in a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="roost-bench-") as name:
        folder = Path(name)
        write_inputs(folder, rows)
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
        env.pop("ROOST_DB", None)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", ROOST, "batch", "two.yaml", "q.jsonl", *options],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"roost batch failed:\n{done.stdout}{done.stderr}")
        results = (folder / "q.jsonl.results.jsonl").read_text().splitlines()
        assert len(results) == rows and all('"terminated"' in line for line in results)
        return seconds


def python_api(rows: int) -> float:
    """Seconds to run the same rows one after another with the Python API, stored."""
    with tempfile.TemporaryDirectory(prefix="roost-bench-") as name:
        flow = load_flow_text(TWO, "two.yaml")
        store = SqlStore(str(Path(name) / "roost.db"))

        async def all_rows() -> None:
            for row in range(rows):
                await Runner(flow=flow, log=store.new_log(f"api-{row}")).start(f"Question {row}?")

        started = time.perf_counter()
        asyncio.run(all_rows())
        seconds = time.perf_counter() - started
        store.close()
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--ray-rows", type=int, default=2_000)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()

    locals_, apis = [], []
    for _ in range(args.repeat):  # in turns, so that both see the same spells of load
        locals_.append(roost_batch(args.rows, "--concurrency", str(args.concurrency)))
        apis.append(python_api(args.rows))
    local, api = min(locals_), min(apis)
    print(f"rows: {args.rows:,} of a two-reply flow on the scripted provider, SQLite store")
    rate = args.rows / local
    print(f"roost batch --concurrency {args.concurrency}: {local:.1f} s, {rate:,.0f} rows/s")
    print(f"Python API, one process:    {api:.1f} s, {args.rows / api:,.0f} rows/s")
    print(f"roost batch adds per row:   {(local - api) / args.rows * 1000:.2f} ms")
    if not args.no_ray:
        ray = roost_batch(args.ray_rows, "--ray", "--concurrency", str(args.concurrency))
        print(
            f"roost batch --ray (a Ray of this machine, its start included), "
            f"{args.ray_rows:,} rows: {ray:.1f} s, {args.ray_rows / ray:,.0f} rows/s"
        )


if __name__ == "__main__":
    main()
