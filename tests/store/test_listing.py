"""Listing stored runs: the database chooses the page, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import event

from roost.store.schema import RUNS
from roost.store.sql import SqlStore

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
