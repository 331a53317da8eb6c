"""The EventLog contract, the same for JSON Lines, SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from roost.errors import ConcurrentRunError, EventLogError
from roost.ports import EventLog

from .conftest import message, run_events, start_event

Backend = Callable[[str], EventLog]


def test_a_new_log_is_empty(backend: Backend) -> None:
    assert backend("r1").load() == []


def test_batches_round_trip_in_order(backend: Backend) -> None:
    log = backend("r1")
    events = run_events("r1", 5)
    log.append(events[:1])
    log.append(events[1:4])
    log.append(events[4:])
    assert backend("r1").load() == events


def test_unicode_and_large_content_survive(backend: Backend) -> None:
    log = backend("r1")
    text = "héllo ✓ 🐦 " * 20_000
    log.append([start_event("r1"), message(1, "r1", text)])
    assert backend("r1").load()[1].content == text  # type: ignore[union-attr]


def test_a_taken_seq_is_a_concurrent_run_error(backend: Backend) -> None:
    first, second = backend("r1"), backend("r1")
    first.append(run_events("r1", 2))
    second.load()
    first.append([message(2, "r1")])
    with pytest.raises(ConcurrentRunError):
        backend("r1").append([message(2, "r1", "late")])
    assert [e.seq for e in backend("r1").load()] == [0, 1, 2]


def test_a_gap_is_refused(backend: Backend) -> None:
    log = backend("r1")
    log.append(run_events("r1", 2))
    with pytest.raises(ConcurrentRunError):
        log.append([message(5, "r1")])
    assert len(backend("r1").load()) == 2


def test_a_refused_batch_writes_nothing(backend: Backend) -> None:
    log = backend("r1")
    log.append(run_events("r1", 2))
    with pytest.raises(ConcurrentRunError):
        log.append([message(2, "r1"), message(4, "r1")])
    assert len(backend("r1").load()) == 2


def test_a_run_start_anywhere_but_first_is_refused(backend: Backend) -> None:
    log = backend("r1")
    log.append(run_events("r1", 1))
    with pytest.raises(EventLogError, match="a second run_start at seq 1: a log holds one run"):
        log.append([start_event("r1").model_copy(update={"seq": 1})])
    assert len(backend("r1").load()) == 1


def test_runs_are_independent(backend: Backend) -> None:
    backend("a").append(run_events("a", 3))
    backend("b").append(run_events("b", 2))
    assert len(backend("a").load()) == 3
    assert [e.run for e in backend("b").load()] == ["b", "b"]


def test_two_writers_racing_never_interleave(backend: Backend) -> None:
    backend("r1").append(run_events("r1", 1))
    outcomes: list[str] = []

    def writer(name: str) -> None:
        log = backend("r1")
        for _ in range(20):
            seq = len(log.load())
            try:
                log.append([message(seq, "r1", f"{name}{seq}"), message(seq + 1, "r1", name)])
                outcomes.append("ok")
            except ConcurrentRunError:
                outcomes.append("conflict")

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = backend("r1").load()
    assert [e.seq for e in events] == list(range(len(events)))
    for a, b in zip(events[1::2], events[2::2], strict=False):
        assert a.content[0] == b.content  # type: ignore[union-attr]  # a batch is never split
    assert outcomes.count("ok") == (len(events) - 1) // 2
