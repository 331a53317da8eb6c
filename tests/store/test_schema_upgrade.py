"""A store made by an older roost (schema 2 or 3) is upgraded in place when it is opened."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, text

from roost.events import RunStartEvent
from roost.store.schema import SCHEMA_VERSION
from roost.store.sql import SqlStore
from roost.store.urls import resolve_url
from tests.store.conftest import run_events

if TYPE_CHECKING:
    from pathlib import Path


def as_schema_3(url: str) -> None:
    """The store at ``url`` as schema 3 wrote it: no archived column."""
    engine = create_engine(resolve_url(url))
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE runs DROP COLUMN archived"))
        conn.execute(text("UPDATE roost_meta SET value = '3' WHERE key = 'schema'"))
    engine.dispose()


def as_schema_2(url: str) -> None:
    """The store at ``url`` as schema 2 wrote it: no batch column, no index on it."""
    as_schema_3(url)
    engine = create_engine(resolve_url(url))
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_runs_batch"))
        conn.execute(text("ALTER TABLE runs DROP COLUMN batch"))
        conn.execute(text("UPDATE roost_meta SET value = '2' WHERE key = 'schema'"))
    engine.dispose()


def schema_of(url: str) -> str:
    engine = create_engine(resolve_url(url))
    with engine.connect() as conn:
        found = conn.execute(text("SELECT value FROM roost_meta WHERE key = 'schema'")).scalar()
    engine.dispose()
    return str(found)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "old.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def test_an_old_store_keeps_its_runs_and_takes_batch_runs(store_url: str) -> None:
    store = SqlStore(store_url)
    store.new_log("old").append(run_events("old", 3))
    store.close()
    as_schema_2(store_url)
    assert schema_of(store_url) == "2"

    store = SqlStore(store_url)  # upgraded here, through schema 3 to 4
    assert schema_of(store_url) == SCHEMA_VERSION == "4"
    assert [(run.id, run.messages, run.batch) for run in store.runs()] == [("old", 2, None)]
    assert [event.seq for event in store.log("old").load()] == [0, 1, 2]
    events = run_events("new", 2)
    start = events[0]
    assert isinstance(start, RunStartEvent)
    store.new_log("new").append([start.model_copy(update={"batch": "b1", "row": 4}), events[1]])
    assert [run.id for run in store.runs(batch="b1")] == ["new"]
    assert store.log("new").load()[0].batch == "b1"  # type: ignore[union-attr]
    store.close()


def test_a_second_opener_racing_the_first_finds_the_store_upgraded(store_url: str) -> None:
    SqlStore(store_url).close()
    as_schema_2(store_url)
    store = SqlStore(store_url)  # the first opener upgrades it
    # A second opener that read version 2 just before: its statements fail (the column
    # is there), and the version it reads again says the store is upgraded.
    assert store._upgrade("2") == SCHEMA_VERSION
    store.close()


def test_a_schema_3_store_keeps_its_runs_and_can_archive_them(store_url: str) -> None:
    store = SqlStore(store_url)
    store.new_log("old").append(run_events("old", 3))
    store.new_log("other").append(run_events("other", 2))
    store.close()
    as_schema_3(store_url)
    assert schema_of(store_url) == "3"

    store = SqlStore(store_url)  # upgraded here
    assert schema_of(store_url) == SCHEMA_VERSION
    assert {run.id: run.archived for run in store.runs()} == {"old": None, "other": None}
    store.set_archived(["old"], "2026-12-01T00:00:00Z")
    assert [run.id for run in store.runs(archived=True)] == ["old"]
    assert [run.id for run in store.runs(archived=False)] == ["other"]
    assert [event.seq for event in store.log("old").load()] == [0, 1, 2]
    store.close()
