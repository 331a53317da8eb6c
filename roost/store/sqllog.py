"""One run's EventLog in the SQL store, with a hand-written SQL path for appends.

An append is the engine's hot path (one per step), so it skips SQLAlchemy's
statement building: two prepared statements on the driver's connection, one
transaction (the run row's ``next_seq`` checked and moved, the events
inserted). Loading parses each stored payload on its own and validates the
run's events in one call. A fork reads its first events from its ancestors' rows.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json
from sqlalchemy import Connection, select

from roost.errors import ConcurrentRunError, EventLogError, UsageError
from roost.events import Event, RunStartEvent, now_iso
from roost.store.checks import invalid_event_text, order_problem, seq_problem
from roost.store.forks import check_fork_point, memory_at
from roost.store.schema import EVENTS, RUNS, Database, RawCursor, RunInfo
from roost.store.summary import summarize

if TYPE_CHECKING:
    from collections.abc import Sequence


@cache
def _events_adapter() -> TypeAdapter[list[Event]]:
    """The validator of a list of events, built once, when a run's events are first read."""
    return TypeAdapter(list[Event])


# Kept in columns, not repeated in the payload (a dict: pydantic-core reads it faster than a set).
_WHERE = {"seq": True, "run": True, "ts": True}
_ROW_COLUMNS = (
    "id", "flow_name", "flow_path", "flow_hash", "flow_text", "title", "parent", "fork_at",
    "created", "updated", "status", "messages", "tokens", "next_seq", "batch",
)  # fmt: skip


def payload(event: Event) -> str:
    """The stored JSON of an event: every field but seq, run and ts."""
    # The model's serializer itself, as model_dump_json calls it, without the wrapper's cost.
    serializer = type(event).__pydantic_serializer__
    text: bytes = serializer.to_json(event, by_alias=True, exclude=_WHERE)
    return text.decode()


class SqlLog:
    """One run's EventLog in a SqlStore."""

    def __init__(
        self,
        store: Database,
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
        items: list[dict[str, Any]] = []
        oldest = 0  # events read from the oldest ancestor
        with self.store.translate("read"), self.store.engine.connect() as conn:
            for source, start, stop in self._segments(conn):
                query = select(EVENTS.c.seq, EVENTS.c.ts, EVENTS.c.payload).where(
                    EVENTS.c.run == source, EVENTS.c.seq >= start
                )
                if stop is not None:
                    query = query.where(EVENTS.c.seq < stop)
                for seq, ts, body in conn.execute(query.order_by(EVENTS.c.seq)):
                    items.append(self._stored_item(seq, ts, body))
                oldest = oldest or len(items)
        return self._mark_fork(self._validated(items), oldest)

    def since(self, after: int, limit: int | None = None) -> list[Event]:
        """The run's events whose seq is greater than ``after``, in order (at most
        ``limit``): only those rows are read, so a stream that follows a long run reads
        each event once, not the whole log at every poll."""
        info = self.info
        if info is None or (info.fork_at is not None and after < info.fork_at):
            events = [event for event in self.load() if event.seq > after]  # a shared prefix
            return events if limit is None else events[:limit]
        query = (
            select(EVENTS.c.seq, EVENTS.c.ts, EVENTS.c.payload)
            .where(EVENTS.c.run == self._run_id, EVENTS.c.seq > after)
            .order_by(EVENTS.c.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        with self.store.translate("read"), self.store.engine.connect() as conn:
            items = [self._stored_item(seq, ts, body) for seq, ts, body in conn.execute(query)]
        return self._validated(items, first=max(after + 1, 0))

    def append(self, events: Sequence[Event]) -> None:
        """Adds one step's events in one transaction; ConcurrentRunError if a seq is taken."""
        if not events:
            return
        first = events[0].seq
        self._check_batch(events)
        run = self._run_id
        rows = [(run, e.seq, e.type, e.ts, payload(e)) for e in events]
        delta = summarize(events)
        sql = self.store.sql
        with self.store.raw_transaction(lambda: self._conflict(first)) as cursor:
            if self.info is None:
                self._insert_row(cursor, events)
            counts = (delta.messages, delta.tokens, delta.tokens)  # tokens: bound twice
            advance = (first + len(events), delta.status, *counts, now_iso(), run, first)
            cursor.execute(sql.advance, advance)
            if cursor.rowcount != 1:
                raise self._conflict(first)
            cursor.executemany(sql.insert_events, rows)
        if self.info is None:
            self.info = self.store.run(self._run_id)

    def fork(self, at: int, new_id: str) -> SqlLog:
        """A new run sharing the first ``at`` events of this one; stored on its first append."""
        parent = self.store.run(self._run_id)  # read afresh: the run may have grown since
        check_fork_point(parent.id, parent.next_seq, at, SqlLog(self.store, parent).load)
        return SqlLog(self.store, None, run_id=new_id, fork_of=(parent, at))

    def materialize(self) -> None:
        """Stores a new fork's row now, before any event of its own (a fork left paused)."""
        if self.info is not None or self._fork_of is None:
            return
        with self.store.raw_transaction(lambda: self._conflict(0)) as cursor:
            self._insert_row(cursor, [])
        self.info = self.store.run(self._run_id)

    # ------------------------------------------------------------------ internals

    def _stored_item(self, seq: int, ts: str, body: str) -> dict[str, Any]:
        """One row as an event's dict: its payload parsed on its own, then seq, run and ts.

        Each payload is parsed by itself, never pasted into a larger JSON text, so a
        damaged row cannot change its neighbours or its own seq.
        """
        try:
            item = from_json(body)
        except (ValueError, TypeError) as exc:  # TypeError: a row that holds no text
            raise self._damaged(seq, f"its payload is not JSON ({exc})") from exc
        if not isinstance(item, dict):
            raise self._damaged(seq, "its payload is not a JSON object")
        item.update(seq=seq, run=self._run_id, ts=ts)
        return item

    def _validated(self, items: list[dict[str, Any]], first: int = 0) -> list[Event]:
        """The events of ``items`` (the first of seq ``first``); one EventLogError naming
        the seq of the first bad one."""
        if not items:  # a new run's log: no validator to build for it
            return []
        try:
            events = _events_adapter().validate_python(items)
        except ValidationError as exc:
            index = exc.errors()[0]["loc"][0]
            seq = items[index]["seq"] if isinstance(index, int) else "?"
            raise self._damaged(seq, invalid_event_text(exc, skip=1)) from exc
        for expected, event in enumerate(events, start=first):
            if problem := order_problem(event, expected, self._run_id):
                raise self._damaged(event.seq, problem)
        return events

    def _damaged(self, seq: object, problem: str) -> EventLogError:
        return EventLogError(f"run {self._run_id}: stored event {seq}: {problem}")

    def _check_batch(self, events: Sequence[Event]) -> None:
        """Refuses a batch that is not the next part of this run, before the database sees it."""
        first = events[0].seq
        if problem := seq_problem((first, first + len(events))):
            raise EventLogError(f"run {self._run_id}: {problem}")
        for offset, item in enumerate(events):
            if item.seq != first + offset:
                raise ConcurrentRunError(f"run {self._run_id}: seq {item.seq} out of order")
            if problem := order_problem(item, first + offset, self._run_id):
                raise EventLogError(f"run {self._run_id}: {problem}")

    def _conflict(self, first: int) -> ConcurrentRunError:
        return ConcurrentRunError(
            f"run {self._run_id}: event {first} was already written; "
            "another process is advancing this run"
        )

    def _insert_row(self, cursor: RawCursor, events: Sequence[Event]) -> None:
        now = now_iso()
        row: dict[str, Any] = {"title": self._title, "created": now, "updated": now, "batch": None}
        if self._fork_of is not None:
            parent, at = self._fork_of
            prefix = SqlLog(self.store, parent).load()[:at]
            shared = summarize(prefix)
            start = prefix[0]
            assert isinstance(start, RunStartEvent)
            row.update(
                flow_name=parent.flow_name, flow_path=parent.flow_path, flow_hash=parent.flow_hash,
                flow_text=start.flow.text, parent=parent.id, fork_at=at, next_seq=at,
                status=shared.status or "new", messages=shared.messages, tokens=shared.tokens,
            )  # fmt: skip
        else:
            start = events[0]
            if start.seq != 0 or not isinstance(start, RunStartEvent):
                raise UsageError(f"run {self._run_id}: a new run starts with run_start at seq 0")
            record = start.flow
            row.update(
                flow_name=record.name, flow_path=record.path, flow_hash=record.hash,
                flow_text=record.text, parent=start.parent, fork_at=None, next_seq=0,
                status="new", messages=0, tokens=0, batch=start.batch,
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
        seen = {run_id}
        while fork_at is not None and parent is not None:
            if parent in seen:  # an edited runs table: reading on would never end
                raise EventLogError(
                    f"run {self._run_id}: the runs it was forked from loop back to run {parent}"
                )
            seen.add(parent)
            stop = fork_at if stop is None else min(stop, fork_at)
            query = select(RUNS.c.parent, RUNS.c.fork_at).where(RUNS.c.id == parent)
            row = conn.execute(query).first()
            run_id, (parent, fork_at) = parent, (row[0], row[1]) if row else (None, None)
            segments.append((run_id, fork_at or 0, stop))
        return list(reversed(segments))

    def _mark_fork(self, events: list[Event], oldest: int) -> list[Event]:
        """A fork's run_start names its parent, fork point and the time of its memory.

        The fork's memory is that of the last event it shares with its oldest
        ancestor (the first ``oldest`` events): where its line of forks left that run.
        """
        if self.info is not None:
            parent, at = self.info.parent, self.info.fork_at
        elif self._fork_of is not None:
            parent, at = self._fork_of[0].id, self._fork_of[1]
        else:
            return events
        start = events[0] if events else None
        if at is not None and isinstance(start, RunStartEvent):
            seen = memory_at(start, events[oldest - 1])
            update = {"parent": parent, "fork_at": at, "memory_at": seen}
            events[0] = start.model_copy(update=update)
        return events
