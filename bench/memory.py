"""Recall latency and size per entry of the memory in a SQLite run store.

    python bench/memory.py [--entries 100000] [--recalls 200]

Stores ``--entries`` knowledge entries (each a sentence of eight words drawn
from a vocabulary of 5,000) in one scope of a fresh SQLite store, then times
``--recalls`` recalls of the top 5 for a twelve-word message and reports the
median and 95th percentile, and the store's size per entry (table and FTS5
index together).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from roost.events import MemoryEntry
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore

VOCABULARY = [f"w{n}" for n in range(5000)]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(words))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--recalls", type=int, default=200)
    options = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "roost.db"
        store = SqlStore(f"sqlite:///{path}")
        memory = SqlMemory(store)
        rows = [
            {"scope": "flow:bench", "key": f"k{n}", "content": sentence(rng, 8),
             "importance": rng.random(), "run": "bench", "updated": "2026-01-01T00:00:00Z"}
            for n in range(options.entries)
        ]  # fmt: skip
        started = time.perf_counter()
        with store.engine.begin() as connection:  # one transaction: the load, not the measure
            connection.execute(
                text(
                    "INSERT INTO memory (scope, key, content, importance, run, updated) "
                    "VALUES (:scope, :key, :content, :importance, :run, :updated)"
                ),
                rows,
            )
        loaded = time.perf_counter() - started
        times = []
        for _ in range(options.recalls):
            query = sentence(rng, 12)
            started = time.perf_counter()
            memory.recall("flow:bench", query, 5)
            times.append((time.perf_counter() - started) * 1000)
        memory.store("flow:bench", MemoryEntry(key="last", content="checked"), "bench")
        store.engine.dispose()
        size = path.stat().st_size + sum(p.stat().st_size for p in Path(folder).glob("roost.db-*"))
    times.sort()
    print(f"entries: {options.entries}, loaded in {loaded:.1f} s")
    median, p95 = statistics.median(times), times[int(len(times) * 0.95) - 1]
    print(
        f"recall (top 5, 12-word message): median {median:.2f} ms, "
        f"p95 {p95:.2f} ms over {options.recalls} recalls"
    )
    print(f"store size: {size / options.entries:.0f} bytes per entry")


if __name__ == "__main__":
    main()
