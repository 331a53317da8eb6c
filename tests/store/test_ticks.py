"""Which schedule ticks were handled: two workers claiming one tick, one wins, on each database."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest

from roost.store.sql import SqlStore
from roost.store.ticks import FIRED, ScheduleTicks

if TYPE_CHECKING:
    from pathlib import Path


def _claims_race(url: str) -> None:
    """Two workers, each with its own connection, claim the same 20 ticks at once."""
    stores = [SqlStore(url), SqlStore(url)]
    claimers = [ScheduleTicks(s, f"w{i}") for i, s in enumerate(stores)]
    wins: list[list[bool]] = [[], []]
    barrier = threading.Barrier(2)

    def claim(index: int) -> None:
        for minute in range(20):
            barrier.wait()
            tick = f"2026-01-05T09:{minute:02d}:00Z"
            wins[index].append(claimers[index].claim("minutely", tick, FIRED))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    assert [a + b for a, b in zip(wins[0], wins[1], strict=True)] == [1] * 20


def test_two_workers_claim_each_tick_once_on_sqlite(tmp_path: Path) -> None:
    _claims_race(str(tmp_path / "runs.db"))


@pytest.mark.postgres
def test_two_workers_claim_each_tick_once_on_postgresql(pg_url: str) -> None:
    _claims_race(pg_url)
