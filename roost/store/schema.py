"""The store's tables: runs (one row per run, with a cached summary) and events.

The events table is the truth; the status and counts in ``runs`` are a cache
that each append updates in the same transaction, so listing runs needs no
replay of their events. ``next_seq`` doubles as the optimistic version: an
append only succeeds if it starts where the row says the run ends.
A fork stores its parent and ``fork_at``: its first ``fork_at`` events are the
parent's, read from the parent's rows (stored once).
"""

from __future__ import annotations

from sqlalchemy import Column, Text
from sqlmodel import Field, SQLModel

SCHEMA_VERSION = "2"


class RoostMeta(SQLModel, table=True):
    """Marks a database as roost's and records the schema version."""

    __tablename__ = "roost_meta"
    key: str = Field(primary_key=True, max_length=64)
    value: str = Field(max_length=256)


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    # No index on the columns each append changes (updated, status, counts): every index
    # on them would add a page write to every step's transaction.

    id: str = Field(primary_key=True, max_length=64)
    flow_name: str = Field(index=True, max_length=256)
    flow_path: str = Field(sa_column=Column(Text, nullable=False))
    flow_hash: str = Field(max_length=80)
    flow_text: str = Field(sa_column=Column(Text, nullable=False))
    title: str | None = Field(default=None, max_length=256)
    parent: str | None = Field(default=None, index=True, max_length=64)
    fork_at: int | None = None  # events shared with the parent; None: all stored here
    created: str = Field(max_length=40)
    updated: str = Field(max_length=40)
    status: str = Field(default="new", max_length=16)
    messages: int = 0
    tokens: int = 0
    next_seq: int = 0


class EventRow(SQLModel, table=True):
    __tablename__ = "events"
    # SQLite: rows clustered by (run, seq), with no second copy of the key in a separate index.
    __table_args__ = {"sqlite_with_rowid": False}

    run: str = Field(primary_key=True, max_length=64)
    seq: int = Field(primary_key=True)
    type: str = Field(max_length=32)
    ts: str = Field(max_length=40)
    payload: str = Field(sa_column=Column(Text, nullable=False))  # the event but seq, run, ts


RUNS = RunRow.__table__  # type: ignore[attr-defined]
EVENTS = EventRow.__table__  # type: ignore[attr-defined]
META = RoostMeta.__table__  # type: ignore[attr-defined]
