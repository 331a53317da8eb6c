"""The run store: every run and its events in a SQL database (SQLite by default).

SQLite runs in WAL mode with ``synchronous=NORMAL``: a commit is in the WAL
file before it returns, so a killed process loses nothing that was committed
(only a power cut could lose the last commits, which FULL would prevent at a
cost per step). Each ``append`` is one transaction, so a step's events land
together or not at all. Any SQLAlchemy URL works (``--db`` or ``ROOST_DB``);
PostgreSQL is tested. Every SQLAlchemy error is turned into a ``StoreError``
here, with the URL's password and the values of its secret-like query
parameters hidden (``urls``).
"""

from __future__ import annotations

import contextlib
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, delete, event, func, inspect, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from roost.errors import ConcurrentRunError, RunNotFoundError, StoreError, UsageError
from roost.events import Event, RunStartEvent
from roost.store.schema import (
    EVENTS,
    META,
    METADATA,
    MIGRATIONS,
    RUNS,
    SCHEMA_VERSION,
    RawCursor,
    RunInfo,
    Statements,
)
from roost.store.sqllog import SqlLog
from roost.store.urls import masked_db, resolve_url, shown_store, shown_url

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Sequence

__all__ = ["RunInfo", "SqlStore", "masked_db", "resolve_url", "shown_store"]

_INFO = [column for column in RUNS.c if column.name != "flow_text"]
# The same columns in the order of RunInfo's fields: a listing builds each row positionally,
# without a mapping per row (a third of listing 10,000 runs went to SQLAlchemy's mappings).
_LISTED = [RUNS.c[name] for name in RunInfo.__dataclass_fields__]


class SqlStore:
    """A connection to a run store; creates its tables on first use."""

    def __init__(
        self, url: str | None = None, *, timeout: float = 5.0, create: bool = True
    ) -> None:
        self.url = resolve_url(url)
        self.timeout = timeout
        self.shown_url, self._redact = shown_url(self.url)
        if not create:
            self._must_exist()
        self.engine = self._create_engine()
        self._raw: Any = None
        self._raw_lock = threading.Lock()
        with self.translate("open"):
            self._prepare()
        self.sql = Statements(self.engine.dialect.paramstyle)

    # ------------------------------------------------------------------ runs

    def log(self, run_id: str) -> SqlLog:
        """The log of a stored run (RunNotFoundError when there is none)."""
        return SqlLog(self, self.run(run_id))

    def new_log(self, run_id: str, *, title: str | None = None) -> SqlLog:
        """A log for a new run; its row is written with its first events."""
        return SqlLog(self, None, run_id=run_id, title=title)

    def child_log(self, run_id: str) -> SqlLog:
        """The log of the stored run ``run_id``, or of a new run by that id.

        What sub-flow runs are written to: a new child gets a new log, and the child
        of a background task, picked up when its parent run continues, its own.
        """
        try:
            return self.log(run_id)
        except RunNotFoundError:
            return self.new_log(run_id)

    def fork(self, run_id: str, at: int, new_id: str) -> SqlLog:
        """A new run sharing the first ``at`` events of ``run_id``; stored on first append."""
        return self.log(run_id).fork(at, new_id)

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

    def runs(
        self,
        *,
        flow: str | None = None,
        status: str | None = None,
        batch: str | None = None,
        archived: bool | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[RunInfo]:
        """Stored runs, newest first, optionally of one flow, in one status, of one batch,
        archived or not (None: both); at most ``limit`` of them after the first ``offset``,
        chosen by the database (a page of a large store reads only that page)."""
        query = select(*_LISTED).order_by(RUNS.c.created.desc(), RUNS.c.id.desc())
        if flow is not None:
            query = query.where(RUNS.c.flow_name == flow)
        if status is not None:
            query = query.where(RUNS.c.status == status)
        if batch is not None:
            query = query.where(RUNS.c.batch == batch)
        if archived is not None:
            column = RUNS.c.archived
            query = query.where(column.is_not(None) if archived else column.is_(None))
        if limit is not None:
            query = query.limit(limit)
        if offset:
            query = query.offset(offset)
        with self.translate("read"), self.engine.connect() as conn:
            return [RunInfo(*row) for row in conn.execute(query).all()]

    def latest_of_type(self, kind: str, run_ids: Sequence[str]) -> dict[str, Event]:
        """The latest event of type ``kind`` among each run's own events, for the runs of
        ``run_ids`` that have one: one grouped read per few hundred runs, not a whole log
        each (``roost runs`` lists thousands)."""
        latest: dict[str, int] = {}
        column = EVENTS.c.seq
        with self.translate("read"), self.engine.connect() as conn:
            for start in range(0, len(run_ids), _PART):
                chunk = list(run_ids[start : start + _PART])
                query = (
                    select(EVENTS.c.run, func.max(column))
                    .where(EVENTS.c.type == kind, EVENTS.c.run.in_(chunk))
                    .group_by(EVENTS.c.run)
                )
                latest.update({run: seq for run, seq in conn.execute(query)})
        return {run: self.log(run).since(seq - 1, limit=1)[0] for run, seq in latest.items()}

    def children(self, run_id: str) -> list[RunInfo]:
        """The runs forked from (or imported as forks of) ``run_id``."""
        query = select(*_INFO).where(RUNS.c.parent == run_id).order_by(RUNS.c.created)
        with self.translate("read"), self.engine.connect() as conn:
            return [RunInfo(**row) for row in conn.execute(query).mappings()]

    def children_of(self, run_ids: Collection[str]) -> list[RunInfo]:
        """The runs whose parent is one of ``run_ids`` (forks and sub-flow runs)."""
        found: list[RunInfo] = []
        with self.translate("read"), self.engine.connect() as conn:
            for part in _parts(run_ids):
                query = select(*_INFO).where(RUNS.c.parent.in_(part)).order_by(RUNS.c.created)
                found += [RunInfo(**row) for row in conn.execute(query).mappings()]
        return found

    def set_archived(self, run_ids: Collection[str], when: str | None) -> None:
        """Marks the runs archived at ``when`` (None: not archived); their events stay."""
        with self.translate("write"), self.engine.begin() as conn:
            for part in _parts(run_ids):
                conn.execute(update(RUNS).where(RUNS.c.id.in_(part)).values(archived=when))

    def delete(self, run_ids: Collection[str]) -> int:
        """Deletes the runs, their events (and serve's leases and inbox rows), in one
        transaction; the number of events deleted.

        A run that stays may not have its parent among them: a fork reads its first
        events from its parent's rows. Such a set is refused, and nothing is deleted.
        """
        ids = set(run_ids)
        with self.translate("delete runs"), self.engine.begin() as conn:
            for part in _parts(ids):
                query = select(RUNS.c.id, RUNS.c.parent).where(RUNS.c.parent.in_(part))
                left = [(run, parent) for run, parent in conn.execute(query) if run not in ids]
                if left:
                    run, parent = left[0]
                    raise UsageError(
                        f"run {run} branches off run {parent}, which would be deleted without "
                        "it: nothing deleted"
                    )
            deleted = 0
            tables = set(inspect(conn).get_table_names())
            for part in _parts(ids):
                deleted += conn.execute(delete(EVENTS).where(EVENTS.c.run.in_(part))).rowcount
                conn.execute(delete(RUNS).where(RUNS.c.id.in_(part)))
                for table in _run_tables(tables):
                    conn.execute(delete(table).where(table.c.run.in_(part)))
        return deleted

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
        # The run was made when its first event was written, not when it was imported.
        times = {"created": events[0].ts, "updated": events[-1].ts}
        with self.translate("write"), self.engine.begin() as conn:
            conn.execute(update(RUNS).where(RUNS.c.id == log.run_id).values(**times))
        return log.run_id

    def close(self) -> None:
        with self._raw_lock:
            self._drop_raw()
        self.engine.dispose()

    @contextmanager
    def raw_transaction(self, conflict: Callable[[], ConcurrentRunError]) -> Iterator[RawCursor]:
        """A cursor on the driver's connection inside one transaction, committed at the end.

        A unique-key violation becomes ``conflict()``; any other driver error a StoreError.
        """
        dbapi = self.engine.dialect.dbapi
        assert dbapi is not None
        with self._raw_lock:
            try:
                raw = self._raw or self._connect_raw()
                cursor = raw.cursor()
                try:
                    yield cursor
                    raw.commit()
                finally:
                    cursor.close()
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, dbapi.IntegrityError):
                    raise conflict() from exc
                if isinstance(exc, dbapi.Error):
                    raise self._failure("write", exc) from exc
                raise

    def _connect_raw(self) -> Any:
        with self.translate("connect"):
            self._raw = self.engine.raw_connection()
        return self._raw

    def _rollback(self) -> None:
        if self._raw is None:
            return
        try:
            self._raw.rollback()
        except Exception:  # a broken connection: drop it, the next write reconnects
            self._drop_raw()

    def _drop_raw(self) -> None:
        if self._raw is not None:
            with contextlib.suppress(Exception):  # already unusable: nothing more to release
                self._raw.invalidate()
            self._raw = None

    # ------------------------------------------------------------------ internals

    @contextmanager
    def translate(self, action: str) -> Iterator[None]:
        """Turns a SQLAlchemy error into one readable StoreError line."""
        try:
            yield
        except SQLAlchemyError as exc:
            raise self._failure(action, exc) from exc

    def _failure(self, action: str, exc: BaseException) -> StoreError:
        """``URL: cannot ACTION: REASON``, with the URL's password hidden wherever it shows."""
        return StoreError(self._redact(f"{self.shown_url}: cannot {action}: {_reason(exc)}"))

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
                _make_folder(Path(url.database).parent)
        elif url.get_backend_name() == "postgresql":
            kwargs["connect_args"] = {"connect_timeout": max(1, int(self.timeout))}
        kwargs = {key: value for key, value in kwargs.items() if value is not None}
        try:
            engine = create_engine(self.url, **kwargs)
        except (ArgumentError, ImportError, SQLAlchemyError) as exc:
            raise self._failure("open", exc) from exc
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
        try:
            with self.engine.begin() as conn:
                METADATA.create_all(conn, tables=[META, RUNS, EVENTS])
                conn.execute(META.insert().values(key="schema", value=SCHEMA_VERSION))
        except SQLAlchemyError:
            # Two processes opening a fresh store at once both create the tables; the
            # second is refused (PostgreSQL: a duplicate pg_type row, or the schema row)
            # once the first has committed them, and finds them made when it looks again.
            with self.engine.connect() as conn:
                if "roost_meta" not in set(inspect(conn).get_table_names()):
                    raise
            self._check_version()

    def _check_version(self) -> None:
        with self.engine.connect() as conn:
            found = conn.execute(select(META.c.value).where(META.c.key == "schema")).scalar()
        if found in MIGRATIONS:
            found = self._upgrade(str(found))
        if found != SCHEMA_VERSION:
            raise StoreError(
                f"{self.shown_url}: store schema {found!r}, this roost reads {SCHEMA_VERSION!r}"
            )

    def _upgrade(self, found: str) -> str:
        """Upgrades a store of an older schema; the version it has then.

        Two processes may open an old store at once: the one that comes second
        fails on a column or index that is already there, and finds the store
        upgraded when it reads the version again.
        """
        try:
            with self.engine.begin() as conn:
                for statement in _statements_from(found):
                    conn.exec_driver_sql(statement)
                conn.execute(
                    update(META).where(META.c.key == "schema").values(value=SCHEMA_VERSION)
                )
        except SQLAlchemyError:
            with self.engine.connect() as conn:
                now = conn.execute(select(META.c.value).where(META.c.key == "schema")).scalar()
            if now != SCHEMA_VERSION:
                raise
        return SCHEMA_VERSION

    def _is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"


_PART = 500  # ids per statement: far below any database's limit on parameters


def _parts(ids: Collection[str]) -> Iterator[list[str]]:
    """``ids`` in lists of at most ``_PART``."""
    listed = sorted(ids)
    for start in range(0, len(listed), _PART):
        yield listed[start : start + _PART]


def _run_tables(present: set[str]) -> list[Any]:
    """The tables of ``roost serve`` that hold rows of one run (a lease, waiting messages)."""
    if "serve_leases" not in present:
        return []
    from roost.store.leases import INBOX, LEASES

    return [table for table in (LEASES, INBOX) if table.name in present]


def _statements_from(version: str) -> list[str]:
    """The statements that take a store of schema ``version`` to ``SCHEMA_VERSION``, in order."""
    statements: list[str] = []
    while version in MIGRATIONS:
        statements += MIGRATIONS[version]
        version = str(int(version) + 1)
    return statements


def _make_folder(folder: Path) -> None:
    """Makes the SQLite file's folder; one StoreError line when it cannot be made."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocked = next((p for p in (folder, *folder.parents) if p.is_file()), None)
        reason = f"{str(blocked)!r} is a file" if blocked else exc.strerror or str(exc)
        raise StoreError(
            f"cannot make the run store's folder {str(folder)!r}: {reason}; "
            "give another place with --db or ROOST_DB"
        ) from exc


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
