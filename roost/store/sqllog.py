"""One run's EventLog in the SQL store, with a hand-written SQL path for appends.

An append is the engine's hot path (one per step), so it skips SQLAlchemy's
statement building: two prepared statements on the driver's connection, one
transaction (the run row's ``next_seq`` checked and moved, the events
inserted). Loading joins the stored payloads into one JSON array and parses
it in one call. A fork reads its first events from its ancestors' rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from sqlalchemy import Connection, select

from roost.errors import ConcurrentRunError, UsageError
from roost.events import Event, RunStartEvent, now_iso
from roost.store.schema import EVENTS, RUNS
from roost.store.summary import summarize

if TYPE_CHECKING:
    from roost.store.sql import RawCursor, RunInfo, SqlStore

EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
_WHERE = {"seq", "run", "ts"}  # kept in columns, not repeated in the payload
_ROW_COLUMNS = (
    "id", "flow_name", "flow_path", "flow_hash", "flow_text", "title", "parent", "fork_at",
    "created", "updated", "status", "messages", "tokens", "next_seq",
)  # fmt: skip


def payload(event: Event) -> str:
    """The stored JSON of an event: every field but seq, run and ts."""
    return event.model_dump_json(by_alias=True, exclude=_WHERE)


class SqlLog:
    """One run's EventLog in a SqlStore."""

    def __init__(
        self,
        store: SqlStore,
        info: RunInfo | None,
        *,
        run_id: str | None = None,
        title: str | None = None,
        fork_of: tuple[RunInfo, int] | None = None,
    ) -> None:
        self.store = store
        self.info = info
        self._run_id = info.id if info else str(run_id)
        self._title = title
        self._fork_of = fork_of

    @property
    def run_id(self) -> str:
        return self._run_id

    def load(self) -> list[Event]:
        """The run's events: a fork's shared prefix (from its ancestors) then its own."""
        parts: list[str] = []
        run = json.dumps(self._run_id)
        with self.store.translate("read"), self.store.engine.connect() as conn:
            for source, start, stop in self._segments(conn):
                query = select(EVENTS.c.seq, EVENTS.c.ts, EVENTS.c.payload).where(
                    EVENTS.c.run == source, EVENTS.c.seq >= start
                )
                if stop is not None:
                    query = query.where(EVENTS.c.seq < stop)
                for seq, ts, body in conn.execute(query.order_by(EVENTS.c.seq)):
                    parts.append(f'{{"seq":{seq},"run":{run},"ts":{json.dumps(ts)},{body[1:]}')
        events = EVENTS_ADAPTER.validate_json("[" + ",".join(parts) + "]")
        return self._mark_fork(events)

    def append(self, events: Sequence[Event]) -> None:
        """Adds one step's events in one transaction; ConcurrentRunError if a seq is taken."""
        if not events:
            return
        first = events[0].seq
        for offset, item in enumerate(events):
            if item.seq != first + offset:
                raise ConcurrentRunError(f"run {self._run_id}: seq {item.seq} out of order")
        run = self._run_id
        rows = [(run, e.seq, e.type, e.ts, payload(e)) for e in events]
        delta = summarize(events)
        sql = self.store.sql
        with self.store.raw_transaction(lambda: self._conflict(first)) as cursor:
            if self.info is None:
                self._insert_row(cursor, events)
            advance = (first + len(events), delta.status, delta.messages, delta.tokens)
            cursor.execute(sql.advance, (*advance, now_iso(), run, first))
            if cursor.rowcount != 1:
                raise self._conflict(first)
            cursor.executemany(sql.insert_events, rows)
        if self.info is None:
            self.info = self.store.run(self._run_id)

    def materialize(self) -> None:
        """Stores a new fork's row now, before any event of its own (a fork left paused)."""
        if self.info is not None or self._fork_of is None:
            return
        with self.store.raw_transaction(lambda: self._conflict(0)) as cursor:
            self._insert_row(cursor, [])
        self.info = self.store.run(self._run_id)

    # ------------------------------------------------------------------ internals

    def _conflict(self, first: int) -> ConcurrentRunError:
        return ConcurrentRunError(
            f"run {self._run_id}: event {first} was already written; "
            "another process is advancing this run"
        )

    def _insert_row(self, cursor: RawCursor, events: Sequence[Event]) -> None:
        now = now_iso()
        row: dict[str, Any] = {"title": self._title, "created": now, "updated": now}
        if self._fork_of is not None:
            parent, at = self._fork_of
            prefix = SqlLog(self.store, parent).load()[:at]
            shared = summarize(prefix)
            start = prefix[0]
            assert isinstance(start, RunStartEvent)
            row.update(
                flow_name=parent.flow_name, flow_path=parent.flow_path, flow_hash=parent.flow_hash,
                flow_text=start.flow.text, parent=parent.id, fork_at=at, next_seq=at,
                status=shared.status, messages=shared.messages, tokens=shared.tokens,
            )  # fmt: skip
        else:
            start = events[0]
            if start.seq != 0 or not isinstance(start, RunStartEvent):
                raise UsageError(f"run {self._run_id}: a new run starts with run_start at seq 0")
            record = start.flow
            row.update(
                flow_name=record.name, flow_path=record.path, flow_hash=record.hash,
                flow_text=record.text, parent=start.parent, fork_at=None, next_seq=0,
                status="new", messages=0, tokens=0,
            )  # fmt: skip
        row["id"] = self._run_id
        cursor.execute(self.store.sql.insert_run, tuple(row[c] for c in _ROW_COLUMNS))

    def _segments(self, conn: Connection) -> list[tuple[str, int, int | None]]:
        """(run, first seq, end seq or None) ranges to read, oldest ancestor first."""
        stop: int | None = None
        if self.info is not None:
            run_id, parent, fork_at = self.info.id, self.info.parent, self.info.fork_at
        elif self._fork_of is not None:
            origin, stop = self._fork_of
            run_id, parent, fork_at = origin.id, origin.parent, origin.fork_at
        else:
            return [(self._run_id, 0, None)]
        segments = [(run_id, fork_at or 0, stop)]
        while fork_at is not None and parent is not None:
            stop = fork_at if stop is None else min(stop, fork_at)
            query = select(RUNS.c.parent, RUNS.c.fork_at).where(RUNS.c.id == parent)
            row = conn.execute(query).first()
            run_id, (parent, fork_at) = parent, (row[0], row[1]) if row else (None, None)
            segments.append((run_id, fork_at or 0, stop))
        return list(reversed(segments))

    def _mark_fork(self, events: list[Event]) -> list[Event]:
        """A fork's run_start names its parent and fork point."""
        if self.info is not None:
            parent, at = self.info.parent, self.info.fork_at
        elif self._fork_of is not None:
            parent, at = self._fork_of[0].id, self._fork_of[1]
        else:
            return events
        if at is not None and events and isinstance(events[0], RunStartEvent):
            events[0] = events[0].model_copy(update={"parent": parent, "fork_at": at})
        return events
