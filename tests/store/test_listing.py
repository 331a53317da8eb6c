"""Listing stored runs: the database chooses the page, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import event

from roost.store.schema import RUNS
from roost.store.sql import SqlStore
from tests.store.conftest import message, run_events

if TYPE_CHECKING:
    from pathlib import Path


def rows(count: int) -> list[dict[str, Any]]:
    """``count`` run rows (no events: a listing reads the runs table only), oldest first."""
    return [
        {
            "id": f"run-{n:06d}", "flow_name": "f" if n % 2 else "g", "flow_path": "f.yaml",
            "flow_hash": "sha256:0", "flow_text": "roost: 1", "created": f"2026-01-01T{n:06d}",
            "updated": f"2026-01-01T{n:06d}", "status": "paused" if n % 3 else "terminated",
        }
        for n in range(count)
    ]  # fmt: skip


def filled(tmp_path: Path, count: int) -> SqlStore:
    store = SqlStore(str(tmp_path / "runs.db"))
    with store.engine.begin() as conn:
        conn.execute(RUNS.insert(), rows(count))
    return store


def test_a_page_is_the_newest_runs_after_the_offset(tmp_path: Path) -> None:
    store = filled(tmp_path, 50)
    every = [info.id for info in store.runs()]
    assert every[:3] == ["run-000049", "run-000048", "run-000047"]
    assert [info.id for info in store.runs(limit=5)] == every[:5]
    assert [info.id for info in store.runs(limit=5, offset=10)] == every[10:15]
    assert [info.id for info in store.runs(offset=45)] == every[45:]
    paused_f = [i.id for i in store.runs(flow="f", status="paused")]
    assert [i.id for i in store.runs(flow="f", status="paused", limit=3, offset=2)] == (
        paused_f[2:5]
    )


def test_the_database_reads_only_the_page(tmp_path: Path) -> None:
    store = filled(tmp_path, 2000)
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if "FROM runs" in statement:
            statements.append(statement.upper())

    event.listen(store.engine, "before_cursor_execute", seen)
    found = store.runs(limit=1, offset=3)
    assert [info.id for info in found] == ["run-001996"]
    assert len(statements) == 1  # one statement, which carries the page
    assert "LIMIT" in statements[0]
    assert "OFFSET" in statements[0]


def test_a_runs_new_events_are_read_from_where_a_reader_stopped(tmp_path: Path) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    store.import_events(run_events("r1", 10))
    log = store.log("r1")
    assert [e.seq for e in log.since(4)] == [5, 6, 7, 8, 9]
    assert [e.seq for e in log.since(4, limit=2)] == [5, 6]
    assert [e.seq for e in log.since(-1)] == list(range(10))
    assert log.since(9) == []
    # A fork reads its shared first events from its parent's rows.
    fork = store.fork("r1", 6, "r2")
    fork.append([message(6, "r2", "own")])
    forked = store.log("r2")
    assert [e.seq for e in forked.since(2)] == [3, 4, 5, 6]
    assert [e.seq for e in forked.since(5)] == [6]
    assert forked.since(5)[0].content == "own"  # type: ignore[attr-defined]
