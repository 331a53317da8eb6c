"""Schedules: ticks fired on time by one worker only, missed ticks recorded and never fired.

The scheduler's clock is injected: time moves when a test sets it, never by
waiting. The real ``roost serve`` process gets its clock from
``ROOST_SCHEDULE_NOW`` (the moment it starts at), half a second before a tick.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from roost.errors import RoostError
from roost.serve.scheduler import Scheduler, clock_from, due_ticks
from roost.serve.servefile import Schedule, tick_key
from roost.store.sql import SqlStore
from roost.store.ticks import FIRED, MISSED, ScheduleTicks
from tests.serve.conftest import start_server, wait_for, write_flows

if TYPE_CHECKING:
    from pathlib import Path

EVERY_MINUTE = Schedule("minutely", "* * * * *", "hello.yaml")


def at(text: str) -> float:
    """Seconds since the epoch of a UTC moment written HH:MM:SS on 2026-01-05."""
    return datetime.fromisoformat(f"2026-01-05T{text}+00:00").timestamp()


class Clock:
    def __init__(self, now: str) -> None:
        self.now = at(now)

    def set(self, now: str) -> None:
        self.now = at(now)

    def __call__(self) -> float:
        return self.now


class Fired:
    """A fire function that records each tick it was asked to start a run for."""

    def __init__(self) -> None:
        self.ticks: list[tuple[str, str]] = []

    async def __call__(self, schedule: Schedule, tick: datetime) -> str:
        self.ticks.append((schedule.name, tick_key(tick)))
        return f"run-{len(self.ticks)}"


def look(scheduler: Scheduler) -> list[tuple[str, str, bool]]:
    return [(h.tick, h.status, h.won) for h in asyncio.run(scheduler.look())]


def rows(ticks: ScheduleTicks, name: str = "minutely") -> list[tuple[str, str, str | None]]:
    return [(r.tick, r.status, r.run) for r in ticks.records(name)]


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    return SqlStore(str(tmp_path / "runs.db"))


# ---------------------------------------------------------------------- the tick logic


def test_due_ticks_fire_the_latest_within_grace_and_miss_the_rest() -> None:
    due = due_ticks(EVERY_MINUTE, at("09:00:30"), at("09:03:10"), grace=60)
    assert [(tick_key(d.tick), d.fire) for d in due] == [
        ("2026-01-05T09:01:00Z", False),
        ("2026-01-05T09:02:00Z", False),
        ("2026-01-05T09:03:00Z", True),
    ]
    late = due_ticks(EVERY_MINUTE, at("09:00:30"), at("09:03:10"), grace=5)
    assert [d.fire for d in late] == [False, False, False]


def test_a_tick_is_read_in_the_schedules_time_zone() -> None:
    paris = Schedule("morning", "0 9 * * *", "hello.yaml", timezone="Europe/Paris")
    assert tick_key(paris.next_after(at("00:00:00"))) == "2026-01-05T08:00:00Z"


def test_the_scheduler_fires_each_tick_once_as_the_clock_moves(store: SqlStore) -> None:
    clock, fired = Clock("09:00:30"), Fired()
    scheduler = Scheduler([EVERY_MINUTE], ScheduleTicks(store, "w1"), fired, clock)
    assert look(scheduler) == []  # a schedule never handled starts from now
    clock.set("09:00:59")
    assert look(scheduler) == []
    clock.set("09:01:00")
    assert look(scheduler) == [("2026-01-05T09:01:00Z", FIRED, True)]
    clock.set("09:01:40")
    assert look(scheduler) == []  # the same tick again: nothing
    assert fired.ticks == [("minutely", "2026-01-05T09:01:00Z")]
    assert rows(scheduler.ticks) == [("2026-01-05T09:01:00Z", FIRED, "run-1")]


def test_ticks_missed_while_down_are_recorded_and_never_fired(store: SqlStore) -> None:
    clock, fired = Clock("09:00:30"), Fired()
    first = Scheduler([EVERY_MINUTE], ScheduleTicks(store, "w1"), fired, clock)
    look(first)
    clock.set("09:01:05")
    look(first)
    # The worker stops; a new one starts at 09:04:20 and looks back to 09:01.
    clock.set("09:04:20")
    second = Scheduler([EVERY_MINUTE], ScheduleTicks(store, "w2"), fired, clock)
    assert look(second) == [
        ("2026-01-05T09:02:00Z", MISSED, True),
        ("2026-01-05T09:03:00Z", MISSED, True),
        ("2026-01-05T09:04:00Z", FIRED, True),
    ]
    # Another restart long after (beyond the grace): every tick since is missed.
    clock.set("09:07:30")
    third = Scheduler([EVERY_MINUTE], ScheduleTicks(store, "w3"), fired, clock, grace=10)
    assert [status for _, status, _ in look(third)] == [MISSED, MISSED, MISSED]
    assert fired.ticks == [
        ("minutely", "2026-01-05T09:01:00Z"),
        ("minutely", "2026-01-05T09:04:00Z"),
    ]
    assert [status for _, status, _ in rows(third.ticks)] == [
        FIRED, MISSED, MISSED, FIRED, MISSED, MISSED, MISSED,
    ]  # fmt: skip


def test_a_tick_whose_run_cannot_start_is_recorded_with_the_reason(store: SqlStore) -> None:
    async def refuse(schedule: Schedule, tick: datetime) -> str:
        raise RoostError("flows/hello.yaml: no such file")

    clock = Clock("09:00:30")
    scheduler = Scheduler([EVERY_MINUTE], ScheduleTicks(store, "w1"), refuse, clock)
    look(scheduler)
    clock.set("09:01:01")
    look(scheduler)
    [record] = scheduler.ticks.records("minutely")
    assert (record.status, record.run, record.error) == (
        FIRED,
        None,
        "flows/hello.yaml: no such file",
    )


# ---------------------------------------------------------------------- several workers


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_schedulers_start_one_run_per_tick(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = str(tmp_path / "runs.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    clock, fired = Clock("09:00:30"), Fired()
    stores = [SqlStore(url), SqlStore(url)]
    workers = [
        Scheduler([EVERY_MINUTE], ScheduleTicks(s, f"w{i}"), fired, clock)
        for i, s in enumerate(stores)
    ]
    for worker in workers:
        worker.begin()  # both start at 09:00:30
    for minute in range(1, 6):
        clock.set(f"09:{minute:02d}:01")
        for worker in workers if minute % 2 else reversed(workers):
            look(worker)
    assert fired.ticks == [("minutely", f"2026-01-05T09:{m:02d}:00Z") for m in range(1, 6)]
    assert len(workers[0].ticks.records("minutely")) == 5
    for store in stores:
        store.close()


# ---------------------------------------------------------------------- a real roost serve


def test_roost_serve_fires_a_schedule_and_records_the_ticks_missed_while_down(
    tmp_path: Path,
) -> None:
    flows = write_flows(tmp_path / "flows")
    (tmp_path / "serve.yaml").write_text(
        "schedules:\n  minutely:\n    cron: '* * * * *'\n    flow: hello.yaml\n"
        "    message: Hello from the schedule.\n"
    )
    db = str(tmp_path / "runs.db")

    def titled(title: str) -> list[str]:
        with_store = SqlStore(db)
        try:
            return [r.status for r in with_store.runs() if r.title == title]
        finally:
            with_store.close()

    args = ("--config", str(tmp_path / "serve.yaml"))
    first = start_server(
        tmp_path, *args, flows=flows, db=db, env={"ROOST_SCHEDULE_NOW": "2026-01-05T08:59:59.5Z"}
    )
    try:
        wait_for(lambda: titled("minutely 2026-01-05T09:00:00Z") == ["terminated"])
    finally:
        first.stop()
    # Down from 09:00 to 09:03:01: 09:01 and 09:02 are missed, 09:03 fires.
    second = start_server(
        tmp_path, *args, flows=flows, db=db, env={"ROOST_SCHEDULE_NOW": "2026-01-05T09:03:01Z"}
    )
    try:
        wait_for(lambda: titled("minutely 2026-01-05T09:03:00Z") == ["terminated"])
    finally:
        second.stop()
    store = SqlStore(db)
    records = ScheduleTicks(store, "reader").records("minutely")
    [first_run] = [r.id for r in store.runs() if r.title == "minutely 2026-01-05T09:00:00Z"]
    events = store.log(first_run).load()
    store.close()
    assert [(r.tick[11:16], r.status) for r in records] == [
        ("09:00", FIRED), ("09:01", MISSED), ("09:02", MISSED), ("09:03", FIRED),
    ]  # fmt: skip
    assert records[0].run == first_run
    assert events[1].content == "Hello from the schedule."  # type: ignore[union-attr]
    assert tick_key(datetime(2026, 1, 5, 9, tzinfo=UTC)) == records[0].tick


def test_the_given_clock_starts_at_its_first_reading_however_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = [1000.0]
    monkeypatch.setattr("roost.serve.scheduler.time.time", lambda: real[0])
    clock = clock_from("2026-01-05T08:59:59.5Z")
    real[0] += 30  # the server took long to start: the schedules' first look still sees 08:59:59.5
    assert clock() == at("08:59:59.5")
    real[0] += 2
    assert clock() == at("09:00:01.5")
