"""The latest event of one type in each of many runs, read without loading their logs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.events import BudgetEvent, Event
from roost.store.sql import SqlStore
from tests.store.conftest import message, start_event

if TYPE_CHECKING:
    from pathlib import Path


def budget(seq: int, run: str, action: str, limit: str = "cost") -> BudgetEvent:
    return BudgetEvent.model_validate(
        {"seq": seq, "run": run, "ts": f"2026-01-01T00:00:01.{seq:06d}Z", "limit": limit,
         "spent": 0.5, "allowed": 1.0, "action": action}
    )  # fmt: skip


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlStore:
    if request.param == "sqlite":
        return SqlStore(f"sqlite:///{tmp_path / 'runs.db'}")
    return SqlStore(request.getfixturevalue("pg_url"))


def test_each_run_gets_its_own_latest_event_of_the_type(store: SqlStore) -> None:
    runs: dict[str, list[Event]] = {
        "asked": [start_event("asked"), budget(1, "asked", "ask"), message(2, "asked")],
        "twice": [start_event("twice"), budget(1, "twice", "ask"), budget(2, "twice", "stop")],
        "none": [start_event("none"), message(1, "none")],
    }
    for run, events in runs.items():
        store.new_log(run).append(events)
    found = store.latest_of_type("budget", ["asked", "twice", "none", "missing"])
    assert set(found) == {"asked", "twice"}
    assert (found["asked"].seq, found["asked"].action) == (1, "ask")  # type: ignore[union-attr]
    assert (found["twice"].seq, found["twice"].action) == (2, "stop")  # type: ignore[union-attr]
    assert store.latest_of_type("budget", ["twice"]) == {"twice": found["twice"]}
    store.close()


def test_more_runs_than_one_statement_takes_are_all_read(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite:///{tmp_path / 'runs.db'}")
    names = [f"run-{n}" for n in range(1203)]
    for name in names:
        store.new_log(name).append([start_event(name), budget(1, name, "stop")])
    assert set(store.latest_of_type("budget", names)) == set(names)
    store.close()
