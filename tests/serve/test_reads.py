"""What the server reads from the store for a stream that follows a long run.

A real ``Hub`` on a real SQLite store, following a run another worker steps
(its events written through a second store, as another process would): each
event is read from the database a fixed number of times however long the run
grows, never the whole log again at each step.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from roost.events import LlmCallEvent, TerminateEvent
from roost.pricing import reported_cost
from roost.serve.config import ServeConfig
from roost.serve.hub import Hub
from roost.serve.streams import follow
from roost.store.sql import SqlStore
from roost.store.sqllog import SqlLog
from tests.store.conftest import message, start_event

if TYPE_CHECKING:
    from pathlib import Path

BATCHES = 30  # steps of the other worker
PER_BATCH = 20  # events each


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """How often each seq is read from a row of the events table (by any read)."""
    read: Counter[int] = Counter()
    original = SqlLog._stored_item

    def counted(self: SqlLog, seq: int, ts: str, body: str) -> dict[str, Any]:
        read[seq] += 1
        return original(self, seq, ts, body)

    monkeypatch.setattr(SqlLog, "_stored_item", counted)
    return read


def test_a_stream_of_a_long_run_reads_each_event_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _counting(monkeypatch)
    db = str(tmp_path / "runs.db")
    (tmp_path / "flows").mkdir()
    other = SqlStore(db)  # the worker that steps the run
    log = other.new_log("r1")
    log.append([start_event("r1")])

    async def scenario() -> list[dict[str, Any]]:
        hub = Hub(ServeConfig(flows=tmp_path / "flows", db=db, lease_seconds=0.3))
        await hub.open()
        items: list[dict[str, Any]] = []

        async def watch() -> None:
            async for batch in follow(hub, "r1", -1):
                items.extend({"type": sent.type, "seq": sent.seq} for sent in batch)

        streaming = asyncio.create_task(watch())
        seq = 1
        for _ in range(BATCHES):
            await asyncio.sleep(0.12)  # about one poll of the stream between steps
            await asyncio.to_thread(
                log.append, [message(s, "r1") for s in range(seq, seq + PER_BATCH)]
            )
            seq += PER_BATCH
        end = TerminateEvent(seq=seq, run="r1", ts="2026-01-01T00:00:01Z", node="b")
        await asyncio.to_thread(log.append, [end])
        await asyncio.wait_for(streaming, 30)
        await hub.close()
        return items

    items = asyncio.run(scenario())
    other.close()
    total = 1 + BATCHES * PER_BATCH + 1
    sent = [item["seq"] for item in items if item["type"] == "event"]
    assert sent == list(range(total))  # every event, once, in order
    assert [item for item in items if item["type"] == "state"]  # and where the run stands
    # Once by the stream's reads of new events, once by the state it shows beside them:
    # never again however many steps came after it.
    assert set(read) == set(range(total))
    assert max(read.values()) <= 2, read.most_common(3)


def test_the_state_of_a_run_stepped_elsewhere_follows_its_new_events(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    (tmp_path / "flows").mkdir()
    other = SqlStore(db)
    log = other.new_log("r1")
    log.append([start_event("r1"), message(1, "r1", "first")])
    hub = Hub(ServeConfig(flows=tmp_path / "flows", db=db))
    try:
        _, state, _ = hub.reads.state("r1")
        assert state.next_seq == 2
        log.append([message(2, "r1", "second")])
        _, state, _ = hub.reads.state("r1")
        assert state.next_seq == 3
        last = state.last_message
        assert last is not None
        assert last.content == "second"
        log.append([TerminateEvent(seq=3, run="r1", ts="2026-01-01T00:00:01Z", node="b")])
        assert hub.summary("r1")["status"] == "terminated"
    finally:
        hub.store.close()
        other.close()


PRICED = (
    "roost: 1\nname: f\nproviders:\n  p: {kind: openai, model: m, price: {input: 1, output: 2}}\n"
)


def _call(seq: int) -> LlmCallEvent:
    usage = {"prompt_tokens": 1000, "completion_tokens": 500}
    return LlmCallEvent(
        seq=seq,
        run="r1",
        ts="t",
        node="b",
        provider="p",
        model="m",
        request_digest="d",
        usage=usage,
    )


def test_the_cost_of_a_run_stepped_elsewhere_counts_each_call_once(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    (tmp_path / "flows").mkdir()
    other = SqlStore(db)
    log = other.new_log("r1")
    log.append([start_event("r1", PRICED), _call(1)])
    hub = Hub(ServeConfig(flows=tmp_path / "flows", db=db))
    try:
        each = reported_cost([start_event("r1", PRICED), _call(1)])
        assert each == 0.002  # 1,000 tokens in at $1 and 500 out at $2 per million
        costs = [hub.summary("r1")["cost"]]
        for seq in range(2, 5):
            log.append([_call(seq)])
            costs += [hub.summary("r1")["cost"], hub.summary("r1")["cost"]]  # read twice
        assert costs == pytest.approx([each, *(each * n for n in (2, 2, 3, 3, 4, 4))])
        assert costs[-1] == reported_cost(other.log("r1").load())
    finally:
        hub.store.close()
        other.close()
