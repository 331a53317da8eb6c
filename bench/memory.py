"""Recall latency and size per entry of the memory in a run store (SQLite or PostgreSQL).

    python bench/memory.py [--entries 100000] [--recalls 200] [--db postgresql://...]

Stores ``--entries`` knowledge entries (each a sentence of eight words drawn
from a vocabulary of 5,000) in one scope of a fresh store (a new SQLite file,
or the empty PostgreSQL database ``--db`` names), then times ``--recalls``
recalls of the top 5 for a twelve-word message, of the memory as it is now and
as it was at a past moment (what a fork sees), and reports the median and 95th
percentile of each, and the store's size per entry (table and full-text index
together).
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
from roost.store.memory import SqlMemory, moment
from roost.store.sql import SqlStore

VOCABULARY = [f"w{n}" for n in range(5000)]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(words))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--db", help="an empty PostgreSQL database (default: a new SQLite file)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "roost.db"
        store = SqlStore(options.db or f"sqlite:///{path}")
        memory = SqlMemory(store)
        loaded = load(store, options.entries, random.Random(7))
        past = moment()  # the memory of this moment is what a fork made now sees later
        memory.store("flow:bench", MemoryEntry(key="k1", content="changed since"), "bench")
        now = time_recalls(memory, options.recalls, None)
        then = time_recalls(memory, options.recalls, past)
        size = store_size(store, path)
        store.engine.dispose()
    print(f"{store.engine.dialect.name}: {options.entries} entries, loaded in {loaded:.1f} s")
    for name, times in (("now", now), ("as of a past moment", then)):
        median, p95 = statistics.median(times), times[int(len(times) * 0.95) - 1]
        print(
            f"recall {name} (top 5, 12-word message): median {median:.2f} ms, "
            f"p95 {p95:.2f} ms over {options.recalls} recalls"
        )
    print(f"store size: {size / options.entries:.0f} bytes per entry")


def load(store: SqlStore, entries: int, rng: random.Random) -> float:
    """Adds ``entries`` entries in one transaction (the load, not the measure); its seconds."""
    at = moment("2026-01-01T00:00:00Z")
    rows = [
        {"scope": "flow:bench", "key": f"k{n}", "content": sentence(rng, 8),
         "importance": rng.random(), "run": "bench", "at": at, "gone": False, "latest": True}
        for n in range(entries)
    ]  # fmt: skip
    started = time.perf_counter()
    with store.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO memory_entries"
                " (scope, key, content, importance, run, at, gone, latest)"
                " VALUES (:scope, :key, :content, :importance, :run, :at, :gone, :latest)"
            ),
            rows,
        )
        if store.engine.dialect.name == "postgresql":
            connection.execute(text("ANALYZE memory_entries"))
    return time.perf_counter() - started


def time_recalls(memory: SqlMemory, recalls: int, as_of: str | None) -> list[float]:
    """Milliseconds of each of ``recalls`` recalls of random twelve-word messages, sorted."""
    rng = random.Random(11)
    times = []
    for _ in range(recalls):
        query = sentence(rng, 12)
        started = time.perf_counter()
        memory.recall("flow:bench", query, 5, as_of=as_of)
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)


def store_size(store: SqlStore, path: Path) -> int:
    """Bytes the memory takes: the SQLite file, or PostgreSQL's tables and indexes."""
    if store.engine.dialect.name != "postgresql":
        store.engine.dispose()
        return path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob("roost.db-*"))
    with store.engine.connect() as connection:
        return int(
            connection.execute(text("SELECT pg_total_relation_size('memory_entries')")).scalar_one()
        )


if __name__ == "__main__":
    main()
