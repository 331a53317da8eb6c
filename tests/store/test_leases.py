"""Leases and inboxes of ``roost serve`` workers, on one SQLite store: who may step a run,
when another worker takes it over, and the messages that wait for it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from roost.store.leases import QueueFull, RunLeases
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    opened = SqlStore(str(tmp_path / "roost.db"))
    yield opened
    opened.close()


def workers(store: SqlStore, seconds: float = 30.0) -> tuple[RunLeases, RunLeases]:
    """Two workers on one store, their leases lasting ``seconds``."""
    return RunLeases(store, "w1", seconds=seconds), RunLeases(store, "w2", seconds=seconds)


def test_a_live_lease_is_not_taken_by_another_worker(store: SqlStore) -> None:
    one, two = workers(store)
    assert one.claim("r1", work=True)
    assert not two.claim("r1")
    assert one.claim("r1")  # its own lease, pushed on
    assert one.holder("r1").owner == "w1"


def test_an_expired_lease_is_taken_by_another_worker(store: SqlStore) -> None:
    one, two = workers(store, seconds=-1.0)  # each lease has expired as it is taken
    assert one.claim("r1", work=True)
    assert two.claim("r1")
    assert two.holder("r1").owner == "w2"


def test_a_lease_is_kept_while_messages_wait_and_given_back_once_none_do(
    store: SqlStore,
) -> None:
    one, two = workers(store)
    one.claim("r1", work=True)
    one.enqueue("r1", "hello", None, limit=10)
    assert not one.release("r1")
    assert one.holder("r1").owner == "w1"
    assert not two.claim("r1")
    one.remove([queued.id for queued in one.inbox("r1")])
    assert one.release("r1")
    assert one.holder("r1").owner is None
    assert two.claim("r1")


def test_a_released_run_has_no_work_left_for_another_worker(store: SqlStore) -> None:
    one, two = workers(store, seconds=-1.0)
    one.claim("r1", work=True)
    assert one.release("r1")
    assert two.claim_due(10) == []


def test_only_runs_with_work_whose_worker_died_are_taken_over(store: SqlStore) -> None:
    live, late = RunLeases(store, "live"), RunLeases(store, "late", seconds=-1.0)
    live.claim("alive", work=True)  # its worker pushes its lease on
    late.claim("dead", work=True)  # its worker stopped pushing
    late.claim("idle")  # expired, but with nothing to do
    taker = RunLeases(store, "taker")
    assert taker.claim_due(10) == ["dead"]
    assert taker.holder("dead").owner == "taker"
    assert taker.holder("alive").owner == "live"


def test_an_inbox_refuses_a_message_past_its_limit_and_keeps_the_order(
    store: SqlStore,
) -> None:
    one, _ = workers(store)
    assert one.enqueue("r1", "first", "alice", limit=2) == 1
    assert one.enqueue("r1", "second", None, limit=2) == 2
    with pytest.raises(QueueFull, match="2 messages waiting"):
        one.enqueue("r1", "third", None, limit=2)
    assert [(q.content, q.sender) for q in one.inbox("r1")] == [
        ("first", "alice"),
        ("second", None),
    ]
    assert one.waiting("r1") == 2


def test_a_worker_renewing_a_lease_it_lost_is_told_so(store: SqlStore) -> None:
    one, two = workers(store, seconds=-1.0)
    one.claim("r1", work=True)
    one.claim("r2", work=True)
    two.claim("r1")  # r1's lease had expired: w2 took it
    lost, cancels = one.renew_all(["r1", "r2"])
    assert (lost, cancels) == ({"r1"}, set())
    assert one.holder("r1").owner == "w2"


def test_a_cancel_reaches_a_live_worker_once_and_never_a_dead_one(store: SqlStore) -> None:
    live = RunLeases(store, "live")
    live.claim("r1", work=True)
    assert live.ask_cancel("r1")
    assert live.renew_all(["r1"]) == (set(), {"r1"})
    assert live.renew_all(["r1"]) == (set(), set())  # asked once, told once
    dead = RunLeases(store, "dead", seconds=-1.0)
    dead.claim("r2", work=True)
    assert not dead.ask_cancel("r2")
    assert dead.holder("r2").alive(time.time()) is False
