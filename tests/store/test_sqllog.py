"""A run's new events, read from where a reader stopped, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from roost.store.sql import SqlStore
from roost.store.sqllog import SqlLog
from tests.store.conftest import message, run_events

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    url = (
        str(tmp_path / "runs.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    opened = SqlStore(url)
    yield opened
    opened.close()


def test_since_gives_the_events_after_a_seq_in_order(store: SqlStore) -> None:
    store.import_events(run_events("r1", 10))
    store.import_events(run_events("r2", 4))  # another run's rows are not among them
    log = store.log("r1")
    assert [e.seq for e in log.since(4)] == [5, 6, 7, 8, 9]
    assert [e.content for e in log.since(7)] == ["m8", "m9"]  # type: ignore[attr-defined]
    assert [e.seq for e in log.since(4, limit=2)] == [5, 6]
    assert [e.seq for e in log.since(-1)] == list(range(10))
    assert log.since(9) == []
    assert log.since(50) == []
    assert {e.run for e in log.since(-1)} == {"r1"}


def test_a_reader_that_follows_a_growing_run_reads_each_row_once(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.import_events(run_events("r1", 3))
    writer = store.log("r1")
    read: list[int] = []  # the seq of each row turned into an event
    original = SqlLog._stored_item

    def counted(self: SqlLog, seq: int, ts: str, body: str) -> dict[str, Any]:
        read.append(seq)
        return original(self, seq, ts, body)

    monkeypatch.setattr(SqlLog, "_stored_item", counted)
    reader = store.log("r1")
    got = reader.since(-1)
    for step in range(5):
        first = 3 + step * 2
        writer.append([message(first, "r1"), message(first + 1, "r1")])
        got += reader.since(got[-1].seq)
    assert [e.seq for e in got] == list(range(13))  # none lost, none twice
    assert read == list(range(13))  # and no row read again


def test_since_reads_a_forks_shared_events_from_its_parent(store: SqlStore) -> None:
    store.import_events(run_events("r1", 10))
    fork = store.fork("r1", 6, "r2")
    fork.append([message(6, "r2", "own")])
    forked = store.log("r2")
    assert [e.seq for e in forked.since(2)] == [3, 4, 5, 6]
    assert [e.content for e in forked.since(4)] == ["m5", "own"]  # type: ignore[attr-defined]
    assert [e.seq for e in forked.since(2, limit=2)] == [3, 4]
    assert forked.since(6) == []
