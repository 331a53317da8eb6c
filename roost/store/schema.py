"""The store's tables: runs (one row per run, with a cached summary) and events.

The events table is the truth; the status and counts in ``runs`` are a cache
that each append updates in the same transaction, so listing runs needs no
replay of their events. ``next_seq`` doubles as the optimistic version: an
append only succeeds if it starts where the row says the run ends.
A fork stores its parent and ``fork_at``: its first ``fork_at`` events are the
parent's, read from the parent's rows (stored once).

Beside the tables: ``RunInfo`` (a run's row as read), ``Statements`` (the
hot path's SQL over these tables) and ``Database``, what one run's log needs
of its store. They live here, below both the store (``sql``) and the log of
one run (``sqllog``), so that neither imports the other's module to name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, Text

from roost.errors import ConcurrentRunError, StoreError
from roost.store.checks import COLUMN_MAX

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

SCHEMA_VERSION = "4"
# Each older schema this roost upgrades in place, and the statements that take it to the
# next one (a store of schema 2 goes through 3 to 4). A store is upgraded when it is
# opened; a newer roost's store is refused (it may hold more).
MIGRATIONS: dict[str, tuple[str, ...]] = {
    "2": (  # 3 adds the batch a run is a row of (roost batch), indexed for roost runs --batch
        "ALTER TABLE runs ADD COLUMN batch VARCHAR(64)",
        "CREATE INDEX ix_runs_batch ON runs (batch)",
    ),
    "3": (  # 4 adds when a run was archived (roost chat's /archive; roost runs --all, --prune)
        "ALTER TABLE runs ADD COLUMN archived VARCHAR(40)",
    ),
}


# The tables are SQLAlchemy Core's, not SQLModel classes: a class costs a pydantic model
# and an ORM mapping at import, a tenth of a second of every command that opens a store,
# and roost reads and writes rows with statements, never through the ORM.
METADATA = MetaData()


def _text(name: str, length: int, **options: Any) -> Column[Any]:
    """A string column of at most ``length`` characters (VARCHAR), not null unless told."""
    options.setdefault("nullable", False)
    return Column(name, String(length), **options)


# Marks a database as roost's and records the schema version.
META = Table(
    "roost_meta",
    METADATA,
    _text("key", 64, primary_key=True),
    _text("value", 256),
)

RUNS = Table(
    "runs",
    METADATA,
    # No index on the columns each append changes (updated, status, counts): every index
    # on them would add a page write to every step's transaction.
    _text("id", 64, primary_key=True),
    _text("flow_name", 256, index=True),
    Column("flow_path", Text, nullable=False),
    _text("flow_hash", 80),
    Column("flow_text", Text, nullable=False),
    _text("title", 256, nullable=True),
    _text("parent", 64, nullable=True, index=True),
    Column("fork_at", Integer, nullable=True),  # events shared with the parent; None: all here
    _text("batch", 64, nullable=True, index=True),  # from run_start
    # When the run was archived (hidden from roost runs); None: it is not. Not indexed:
    # only listing and pruning read it, never a step.
    _text("archived", 40, nullable=True),
    _text("created", 40),
    _text("updated", 40),
    _text("status", 16, default="new"),
    Column("messages", Integer, nullable=False, default=0),
    Column("tokens", Integer, nullable=False, default=0),
    Column("next_seq", Integer, nullable=False, default=0),
)

EVENTS = Table(
    "events",
    METADATA,
    _text("run", 64, primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    _text("type", 32),
    _text("ts", 40),
    Column("payload", Text, nullable=False),  # the event but seq, run, ts
    # SQLite: rows clustered by (run, seq), with no second copy of the key in a separate index.
    sqlite_with_rowid=False,
)


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
    batch: str | None = None
    archived: str | None = None  # when the run was archived; None: it is not


RawCursor = Any  # a DB-API cursor of the store's driver


class Statements:
    """The hot path's SQL in the driver's own parameter style."""

    def __init__(self, paramstyle: str) -> None:
        if paramstyle == "qmark":
            mark = "?"
        elif paramstyle in ("format", "pyformat"):
            mark = "%s"
        else:
            raise StoreError(f"database drivers with {paramstyle!r} parameters are not supported")

        def marks(count: int) -> str:
            return ", ".join([mark] * count)

        # A batch that changes no status (a model call, a tool's result) keeps the row's.
        # The token count stops at COLUMN_MAX, compared before adding so that no database
        # computes a sum its column cannot hold (the parameter is bound twice).
        cap = COLUMN_MAX
        tokens = f"CASE WHEN tokens > {cap} - {mark} THEN {cap} ELSE tokens + {mark} END"
        self.advance = (
            f"UPDATE runs SET next_seq = {mark}, status = COALESCE({mark}, status), "
            f"messages = messages + {mark}, "
            f"tokens = {tokens}, updated = {mark} WHERE id = {mark} AND next_seq = {mark}"
        )
        self.insert_events = f"INSERT INTO events (run, seq, type, ts, payload) VALUES ({marks(5)})"
        columns = (
            "id, flow_name, flow_path, flow_hash, flow_text, title, parent, fork_at, "
            "created, updated, status, messages, tokens, next_seq, batch"
        )
        self.insert_run = f"INSERT INTO runs ({columns}) VALUES ({marks(15)})"


class Database(Protocol):
    """What one run's log (``SqlLog``) needs of its store; ``SqlStore`` is the implementation."""

    engine: Engine
    sql: Statements

    def translate(self, action: str) -> AbstractContextManager[None]:
        """Turns a SQLAlchemy error into one readable StoreError line."""
        ...

    def raw_transaction(
        self, conflict: Callable[[], ConcurrentRunError]
    ) -> AbstractContextManager[RawCursor]:
        """A cursor on the driver's connection inside one transaction, committed at the end."""
        ...

    def run(self, run_id: str) -> RunInfo:
        """The row of a stored run (RunNotFoundError when there is none)."""
        ...
