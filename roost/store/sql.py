"""The run store: every run and its events in a SQL database (SQLite by default).

SQLite runs in WAL mode with ``synchronous=NORMAL``: a commit is in the WAL
file before it returns, so a killed process loses nothing that was committed
(only a power cut could lose the last commits, which FULL would prevent at a
cost per step). Each ``append`` is one transaction, so a step's events land
together or not at all. Any SQLAlchemy URL works (``--db`` or ``ROOST_DB``);
PostgreSQL is tested. Every SQLAlchemy error is turned into a ``StoreError``
here, with the URL's password hidden.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.pool import NullPool
from sqlmodel import SQLModel

from roost.errors import ConcurrentRunError, RunNotFoundError, StoreError, UsageError
from roost.events import EVENT_ADAPTER, Event, RunStartEvent, event_json, now_iso
from roost.store.schema import EVENTS, META, RUNS, SCHEMA_VERSION
from roost.store.summary import summarize

DEFAULT_PATH = Path(".roost") / "roost.db"
_INFO = [column for column in RUNS.c if column.name != "flow_text"]


def resolve_url(db: str | None = None) -> str:
    """The database URL: ``db``, else ``ROOST_DB``, else ``.roost/roost.db`` here.

    A value without ``://`` is taken as the path of a SQLite file.
    """
    value = db or os.environ.get("ROOST_DB") or ""
    if not value:
        DEFAULT_PATH.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{DEFAULT_PATH}"
    if "://" not in value:
        return f"sqlite:///{value}"
    if value.startswith(("postgresql://", "postgres://")):
        # psycopg (3) is the driver roost installs; SQLAlchemy's default would be psycopg2.
        return "postgresql+psycopg://" + value.split("://", 1)[1]
    return value


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run's row: what `roost runs` lists."""

    id: str
    flow_name: str
    flow_path: str
    flow_hash: str
    title: str | None
    parent: str | None
    fork_at: int | None
    created: str
    updated: str
    status: str
    messages: int
    tokens: int
    next_seq: int


class SqlStore:
    """A connection to a run store; creates its tables on first use."""

    def __init__(
        self, url: str | None = None, *, timeout: float = 5.0, create: bool = True
    ) -> None:
        self.url = resolve_url(url)
        self.timeout = timeout
        self.shown_url = self._shown(self.url)
        if not create:
            self._must_exist()
        self.engine = self._create_engine()
        with self.translate("open"):
            self._prepare()

    # ------------------------------------------------------------------ runs

    def log(self, run_id: str) -> SqlLog:
        """The log of a stored run (RunNotFoundError when there is none)."""
        return SqlLog(self, self.run(run_id))

    def new_log(self, run_id: str, *, title: str | None = None) -> SqlLog:
        """A log for a new run; its row is written with its first events."""
        return SqlLog(self, None, run_id=run_id, title=title)

    def fork(self, run_id: str, at: int, new_id: str) -> SqlLog:
        """A new run sharing the first ``at`` events of ``run_id``; stored on first append."""
        parent = self.run(run_id)
        if at < 1 or at > parent.next_seq:
            raise UsageError(
                f"run {run_id} has events 0 to {parent.next_seq - 1}: cannot fork at {at}"
            )
        return SqlLog(self, None, run_id=new_id, fork_of=(parent, at))

    def run(self, run_id: str) -> RunInfo:
        with self.translate("read"), self.engine.connect() as conn:
            row = conn.execute(select(*_INFO).where(RUNS.c.id == run_id)).mappings().first()
        if row is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.shown_url}")
        return RunInfo(**row)

    def find(self, ref: str) -> str:
        """The id of the run ``ref`` names: an id, or a unique prefix of one."""
        with self.translate("read"), self.engine.connect() as conn:
            if conn.execute(select(RUNS.c.id).where(RUNS.c.id == ref)).first():
                return ref
            pattern = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            query = select(RUNS.c.id).where(RUNS.c.id.like(pattern, escape="\\")).limit(3)
            found = [row[0] for row in conn.execute(query)]
        if len(found) == 1 and ref:
            return str(found[0])
        if found and ref:
            raise UsageError(f"{ref!r} names several runs ({', '.join(found)}, ...): give more")
        raise RunNotFoundError(f"no run {ref!r} in {self.shown_url}")

    def runs(self, *, flow: str | None = None, status: str | None = None) -> list[RunInfo]:
        """Stored runs, newest first, optionally of one flow or in one status."""
        query = select(*_INFO).order_by(RUNS.c.created.desc(), RUNS.c.id.desc())
        if flow is not None:
            query = query.where(RUNS.c.flow_name == flow)
        if status is not None:
            query = query.where(RUNS.c.status == status)
        with self.translate("read"), self.engine.connect() as conn:
            return [RunInfo(**row) for row in conn.execute(query).mappings()]

    def children(self, run_id: str) -> list[RunInfo]:
        """The runs forked from (or imported as forks of) ``run_id``."""
        query = select(*_INFO).where(RUNS.c.parent == run_id).order_by(RUNS.c.created)
        with self.translate("read"), self.engine.connect() as conn:
            return [RunInfo(**row) for row in conn.execute(query).mappings()]

    def rename(self, run_id: str, title: str) -> None:
        self.run(run_id)
        with self.translate("write"), self.engine.begin() as conn:
            conn.execute(update(RUNS).where(RUNS.c.id == run_id).values(title=title))

    def import_events(self, events: Sequence[Event]) -> str:
        """Stores a whole run (from a JSON Lines file); its id must be new here."""
        if not events or not isinstance(events[0], RunStartEvent):
            raise UsageError("the events do not start with a run_start event")
        log = self.new_log(events[0].run)
        log.append(events)
        return log.run_id

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ internals

    @contextmanager
    def translate(self, action: str) -> Iterator[None]:
        """Turns a SQLAlchemy error into one readable StoreError line."""
        try:
            yield
        except SQLAlchemyError as exc:
            raise StoreError(f"{self.shown_url}: cannot {action}: {_reason(exc)}") from exc

    @staticmethod
    def _shown(url: str) -> str:
        try:
            return make_url(url).render_as_string(hide_password=True)
        except ArgumentError as exc:
            raise StoreError(f"not a database URL: {url!r}") from exc

    def _must_exist(self) -> None:
        """A SQLite file that is not there holds no run: say so instead of creating it."""
        url = make_url(self.url)
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
            return
        if not Path(str(url.database)).exists():
            raise RunNotFoundError(f"no runs stored yet in {url.database}")

    def _create_engine(self) -> Engine:
        url = make_url(self.url)
        kwargs: dict[str, Any] = {}
        if url.get_backend_name() == "sqlite":
            kwargs["connect_args"] = {"timeout": self.timeout, "check_same_thread": False}
            kwargs["poolclass"] = NullPool if url.database in (None, "", ":memory:") else None
            if url.database not in (None, "", ":memory:"):
                Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        elif url.get_backend_name() == "postgresql":
            kwargs["connect_args"] = {"connect_timeout": max(1, int(self.timeout))}
        kwargs = {key: value for key, value in kwargs.items() if value is not None}
        try:
            engine = create_engine(self.url, **kwargs)
        except (ArgumentError, ImportError, SQLAlchemyError) as exc:
            raise StoreError(f"{self.shown_url}: cannot open: {_reason(exc)}") from exc
        if url.get_backend_name() == "sqlite":
            event.listen(engine, "connect", _sqlite_pragmas)
        return engine

    def _prepare(self) -> None:
        """Creates the tables in an empty database; refuses one that is not roost's."""
        with self.engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
        if "roost_meta" in tables:
            self._check_version()
            return
        foreign = tables & {"runs", "events"} if not self._is_sqlite() else tables
        if foreign:
            raise StoreError(f"{self.shown_url}: not a roost database (it has other tables)")
        if self._is_sqlite():
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        with self.engine.begin() as conn:
            SQLModel.metadata.create_all(conn, tables=[META, RUNS, EVENTS])
            conn.execute(META.insert().values(key="schema", value=SCHEMA_VERSION))

    def _check_version(self) -> None:
        with self.engine.connect() as conn:
            found = conn.execute(select(META.c.value).where(META.c.key == "schema")).scalar()
        if found != SCHEMA_VERSION:
            raise StoreError(
                f"{self.shown_url}: store schema {found!r}, this roost reads {SCHEMA_VERSION!r}"
            )

    def _is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # journal_mode=WAL is set once when the tables are made (it persists in the file);
    # synchronous is per connection.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _reason(exc: BaseException) -> str:
    """The first line of the driver's message, without SQLAlchemy's background link."""
    inner = getattr(exc, "orig", None) or exc
    text = str(inner).strip().splitlines()
    line = text[0] if text else type(inner).__name__
    if "database is locked" in line:
        return "the database is locked by another process"
    if "file is not a database" in line:
        return "not a roost database (not a SQLite file, or corrupted)"
    return line


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
        with self.store.translate("read"), self.store.engine.connect() as conn:
            segments = self._segments(conn)
            events: list[Event] = []
            for run, start, stop in segments:
                query = select(EVENTS.c.payload).where(EVENTS.c.run == run, EVENTS.c.seq >= start)
                if stop is not None:
                    query = query.where(EVENTS.c.seq < stop)
                rows = conn.execute(query.order_by(EVENTS.c.seq)).scalars()
                events.extend(EVENT_ADAPTER.validate_json(payload) for payload in rows)
        return self._as_own(events)

    def append(self, events: Sequence[Event]) -> None:
        """Adds one step's events in one transaction; ConcurrentRunError if a seq is taken."""
        if not events:
            return
        first = events[0].seq
        for offset, item in enumerate(events):
            if item.seq != first + offset:
                raise ConcurrentRunError(f"run {self._run_id}: seq {item.seq} out of order")
        rows = [
            {
                "run": self._run_id,
                "seq": e.seq,
                "type": e.type,
                "ts": e.ts,
                "payload": event_json(e),
            }
            for e in events
        ]
        try:
            with self.store.translate("write"), self.store.engine.begin() as conn:
                if self.info is None:
                    self._insert_row(conn, events)
                self._advance(conn, first, events)
                conn.execute(EVENTS.insert(), rows)
        except StoreError as exc:
            if isinstance(exc.__cause__, IntegrityError):
                raise self._conflict(first) from exc
            raise
        if self.info is None:
            self.info = self.store.run(self._run_id)

    def materialize(self) -> None:
        """Stores a new fork's row now, before any event of its own (a fork left paused)."""
        if self.info is not None or self._fork_of is None:
            return
        try:
            with self.store.translate("write"), self.store.engine.begin() as conn:
                self._insert_row(conn, [])
        except StoreError as exc:
            if isinstance(exc.__cause__, IntegrityError):
                raise self._conflict(self._fork_of[1]) from exc
            raise
        self.info = self.store.run(self._run_id)

    # ------------------------------------------------------------------ internals

    def _conflict(self, first: int) -> ConcurrentRunError:
        return ConcurrentRunError(
            f"run {self._run_id}: event {first} was already written; "
            "another process is advancing this run"
        )

    def _advance(self, conn: Connection, first: int, events: Sequence[Event]) -> None:
        current = conn.execute(select(RUNS.c.status).where(RUNS.c.id == self._run_id)).scalar()
        delta = summarize(events, current or "new")
        result = conn.execute(
            update(RUNS)
            .where(RUNS.c.id == self._run_id, RUNS.c.next_seq == first)
            .values(
                next_seq=first + len(events),
                status=delta.status,
                messages=RUNS.c.messages + delta.messages,
                tokens=RUNS.c.tokens + delta.tokens,
                updated=now_iso(),
            )
        )
        if result.rowcount != 1:
            raise self._conflict(first)

    def _insert_row(self, conn: Connection, events: Sequence[Event]) -> None:
        now = now_iso()
        if self._fork_of is not None:
            parent, at = self._fork_of
            shared = self._shared_summary(conn, parent, at)
            row = {
                "id": self._run_id, "flow_name": parent.flow_name, "flow_path": parent.flow_path,
                "flow_hash": parent.flow_hash, "flow_text": self._flow_text(conn, parent.id),
                "parent": parent.id, "fork_at": at, "next_seq": at, **shared,
            }  # fmt: skip
        else:
            start = events[0]
            if start.seq != 0 or not isinstance(start, RunStartEvent):
                raise UsageError(f"run {self._run_id}: a new run starts with run_start at seq 0")
            record = start.flow
            row = {
                "id": self._run_id, "flow_name": record.name, "flow_path": record.path,
                "flow_hash": record.hash, "flow_text": record.text, "parent": start.parent,
                "fork_at": None, "next_seq": 0,
            }  # fmt: skip
        row.update(title=self._title, created=now, updated=now)
        conn.execute(RUNS.insert().values(**row))

    def _shared_summary(self, conn: Connection, parent: RunInfo, at: int) -> dict[str, Any]:
        prefix = SqlLog(self.store, parent).load()[:at]
        delta = summarize(prefix)
        return {"status": delta.status, "messages": delta.messages, "tokens": delta.tokens}

    @staticmethod
    def _flow_text(conn: Connection, run_id: str) -> str:
        text = conn.execute(select(RUNS.c.flow_text).where(RUNS.c.id == run_id)).scalar()
        return str(text or "")

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

    def _as_own(self, events: list[Event]) -> list[Event]:
        """Events of ancestors relabelled as this run's; run_start names parent and fork point."""
        parent, at = self._parent_and_fork_at()
        if at is None:
            return events
        own: list[Event] = []
        for item in events:
            if item.run == self._run_id:
                own.append(item)
                continue
            changes: dict[str, Any] = {"run": self._run_id}
            if isinstance(item, RunStartEvent):
                changes.update(parent=parent, fork_at=at)
            own.append(item.model_copy(update=changes))
        return own

    def _parent_and_fork_at(self) -> tuple[str | None, int | None]:
        if self.info is not None:
            return self.info.parent, self.info.fork_at
        if self._fork_of is not None:
            return self._fork_of[0].id, self._fork_of[1]
        return None, None
