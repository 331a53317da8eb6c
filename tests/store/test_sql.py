"""The SQL store beyond the EventLog contract: forks, listing, bad databases."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from roost.errors import ConcurrentRunError, RunNotFoundError, StoreError, UsageError
from roost.events import InterruptEvent, LlmCallEvent, RunStartEvent, TerminateEvent
from roost.store.sql import SqlStore, resolve_url

from .conftest import message, run_events

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlStore:
    url = (
        str(tmp_path / "roost.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    return SqlStore(url)


def stored_run(store: SqlStore, run_id: str, count: int) -> None:
    store.new_log(run_id).append(run_events(run_id, count))


def test_a_fork_shares_its_parents_prefix(store: SqlStore) -> None:
    stored_run(store, "p", 6)
    fork = store.fork("p", 3, "f")
    prefix = fork.load()
    assert [(e.seq, e.run) for e in prefix] == [(0, "f"), (1, "f"), (2, "f")]
    start = prefix[0]
    assert isinstance(start, RunStartEvent) and (start.parent, start.fork_at) == ("p", 3)
    fork.append([message(3, "f", "other way")])
    loaded = store.log("f").load()
    assert [e.content for e in loaded[1:]] == ["m1", "m2", "other way"]  # type: ignore[union-attr]
    with store.engine.connect() as conn:
        stored = conn.execute(text("SELECT count(*) FROM events WHERE run = 'f'")).scalar()
    assert stored == 1  # the shared events are stored once, in the parent


def test_a_fork_of_a_fork_reads_through_both(store: SqlStore) -> None:
    stored_run(store, "p", 5)
    first = store.fork("p", 3, "f1")
    first.append([message(3, "f1", "f1-3"), message(4, "f1", "f1-4")])
    second = store.fork("f1", 4, "f2")
    second.append([message(4, "f2", "f2-4")])
    contents = [e.content for e in store.log("f2").load()[1:]]  # type: ignore[union-attr]
    assert contents == ["m1", "m2", "f1-3", "f2-4"]
    assert store.log("p").load() == run_events("p", 5)


def test_a_fork_is_stored_only_when_it_appends(store: SqlStore) -> None:
    stored_run(store, "p", 3)
    store.fork("p", 2, "f")
    with pytest.raises(RunNotFoundError):
        store.run("f")


def test_fork_past_the_end_is_a_usage_error(store: SqlStore) -> None:
    stored_run(store, "p", 3)
    with pytest.raises(UsageError, match="events 0 to 2: cannot fork at 4"):
        store.fork("p", 4, "f")
    with pytest.raises(UsageError):
        store.fork("p", 0, "f")


def test_the_family_of_a_run(store: SqlStore) -> None:
    stored_run(store, "p", 3)
    for name in ("a", "b"):
        store.fork("p", 2, name).append([message(2, name)])
    assert [r.id for r in store.children("p")] == ["a", "b"]
    assert store.run("a").parent == "p"


def test_the_runs_table_caches_status_and_counts(store: SqlStore) -> None:
    log = store.new_log("r")
    log.append(run_events("r", 3))
    assert (store.run("r").status, store.run("r").messages) == ("running", 2)
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    call = LlmCallEvent(
        seq=3, run="r", ts="t", node="a", provider="p", model="m", request_digest="d", usage=usage
    )
    pause = InterruptEvent.model_validate({"seq": 4, "run": "r", "ts": "t", "from": "b", "to": "a"})
    log.append(
        [call, message(4, "r").model_copy(update={"seq": 4}), pause.model_copy(update={"seq": 5})]
    )
    info = store.run("r")
    assert (info.status, info.messages, info.tokens, info.next_seq) == ("paused", 3, 15, 6)
    log.append([TerminateEvent(seq=6, run="r", ts="t", node="a")])
    assert store.run("r").status == "terminated"


def test_listing_filters_by_flow_and_status(store: SqlStore) -> None:
    stored_run(store, "one", 2)
    store.new_log("two").append(
        [*run_events("two", 1), TerminateEvent(seq=1, run="two", ts="t", node="a")]
    )
    assert {r.id for r in store.runs()} == {"one", "two"}
    assert [r.id for r in store.runs(status="terminated")] == ["two"]
    assert store.runs(flow="nope") == []
    assert len(store.runs(flow="f")) == 2


def test_find_by_prefix(store: SqlStore) -> None:
    stored_run(store, "abc-1", 1)
    stored_run(store, "abc-2", 1)
    assert store.find("abc-1") == "abc-1"
    with pytest.raises(UsageError, match="several runs"):
        store.find("abc")
    with pytest.raises(RunNotFoundError):
        store.find("zzz")
    with pytest.raises(RunNotFoundError):
        store.find("a%")


def test_import_refuses_an_id_already_stored(store: SqlStore) -> None:
    events = run_events("r", 3)
    assert store.import_events(events) == "r"
    with pytest.raises(ConcurrentRunError):
        store.import_events(events)
    assert store.log("r").load() == events


def test_an_imported_run_keeps_the_times_its_events_were_written(store: SqlStore) -> None:
    events = [
        event.model_copy(update={"ts": f"2025-01-0{n + 1}T10:00:00.000Z"})
        for n, event in enumerate(run_events("old", 3))
    ]
    store.import_events(events)
    info = store.run("old")
    assert (info.created, info.updated) == (events[0].ts, events[-1].ts)


def test_a_new_run_must_start_with_run_start(store: SqlStore) -> None:
    with pytest.raises(UsageError, match="run_start"):
        store.new_log("r").append([message(0, "r")])
    with pytest.raises(RunNotFoundError):
        store.run("r")


def test_rename(store: SqlStore) -> None:
    stored_run(store, "r", 1)
    store.rename("r", "my chat")
    assert store.run("r").title == "my chat"


def test_many_runs_advance_at_once(store: SqlStore) -> None:
    errors: list[BaseException] = []

    def advance(run_id: str) -> None:
        try:
            log = SqlStore(store.url).new_log(run_id)
            log.append(run_events(run_id, 1))
            for seq in range(1, 30):
                log.append([message(seq, run_id)])
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=advance, args=(f"run{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(store.run(f"run{n}").next_seq == 30 for n in range(6))


# ---------------------------------------------------------------- bad databases


def test_a_corrupted_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "roost.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="not a roost database"):
        SqlStore(str(path))


def test_a_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(StoreError, match="not a roost database"):
        SqlStore(str(path))
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert names == ["customers"]  # nothing written


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    store = SqlStore(str(tmp_path / "roost.db"))
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE roost_meta SET value = '99' WHERE key = 'schema'"))
    with pytest.raises(StoreError, match="schema '99'"):
        SqlStore(str(tmp_path / "roost.db"))


def test_a_locked_database_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "roost.db"
    SqlStore(str(path)).new_log("r").append(run_events("r", 1))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        store = SqlStore(str(path), timeout=0.2)
        with pytest.raises(StoreError, match="locked by another process"):
            store.log("r").append([message(1, "r")])
        # It waited the store's timeout for the lock, not SQLite's default of five seconds.
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 200
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_unreachable_server_is_one_clear_error(pg_server: str) -> None:
    url = "postgresql://roost:s3cret@127.0.0.1:1/nothing"
    with pytest.raises(StoreError) as caught:
        SqlStore(url, timeout=1)
    message_text = str(caught.value)
    assert "s3cret" not in message_text and "\n" not in message_text
    assert "127.0.0.1:1" in message_text


def test_an_unknown_driver_is_one_clear_error() -> None:
    with pytest.raises(StoreError, match="cannot open"):
        SqlStore("nosuchdb://x/y")


def test_urls() -> None:
    assert resolve_url("runs.db") == "sqlite:///runs.db"
    assert resolve_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"


def test_sqlite_store_uses_wal(tmp_path: Path) -> None:
    SqlStore(str(tmp_path / "roost.db")).new_log("r").append(run_events("r", 1))
    with sqlite3.connect(tmp_path / "roost.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_fork_can_be_stored_before_its_first_event(store: SqlStore) -> None:
    stored_run(store, "p", 4)
    fork = store.fork("p", 2, "f")
    fork.materialize()
    info = store.run("f")
    assert (info.parent, info.fork_at, info.next_seq, info.messages) == ("p", 2, 2, 1)
    assert len(store.log("f").load()) == 2
    fork.append([message(2, "f")])
    assert store.run("f").next_seq == 3


def test_a_fork_point_inside_a_step_is_refused(store: SqlStore) -> None:
    events = run_events("p", 5)
    step = [e.model_copy(update={"ts": "same"}) for e in events[2:4]]
    store.new_log("p").append([*events[:2], *step, events[4]])
    with pytest.raises(UsageError, match="events 2 to 3 are one step; fork at 2 or 4"):
        store.fork("p", 3, "f")
    store.fork("p", 4, "f")  # a step boundary
    store.fork("p", 1, "g")  # a new start is always possible


async def test_event_times_and_the_runs_table_are_stamped_alike(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One clock writes a run's event times and its row's created and updated: at a whole
    second as well, where ``isoformat`` would leave the fraction out of one of them."""
    from roost.engine import Runner
    from roost.testing import flow_from_yaml

    monkeypatch.setattr(time, "time_ns", lambda: 1_796_000_000 * 1_000_000_000)
    flow = flow_from_yaml(
        """
        roost: 1
        name: stamped
        agents:
          person: {interrupt: ALWAYS}
          helper: {}
        start: {from: person, to: helper, content: Hello}
        """,
        replies=["Hi."],
    )
    log = store.new_log("r")
    await Runner(flow=flow, log=log).start()
    info = store.run("r")
    assert {event.ts for event in log.load()} == {info.created, info.updated}
    assert info.updated == "2026-11-30T00:53:20.000000Z"
