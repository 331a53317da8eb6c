"""Which schedule ticks were handled, and how: one row per (schedule, tick) in the store.

Every ``roost serve`` worker sharing a database looks at the same schedules.
A worker handles a tick only if it inserts the tick's row first: the primary
key (schedule, tick) lets exactly one insert succeed, on SQLite as on
PostgreSQL, so a tick starts at most one run however many workers see it.
A tick nobody fired in time (every worker was down) gets a row too, marked
``missed``: it is recorded once and never fired later.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Column, Text, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlmodel import Field, SQLModel

if TYPE_CHECKING:
    from roost.store.schema import Database

FIRED = "fired"
MISSED = "missed"


class TickRow(SQLModel, table=True):
    """One schedule tick that a worker claimed: fired (a run started) or missed."""

    __tablename__ = "serve_schedule_ticks"

    schedule: str = Field(primary_key=True, max_length=128)
    tick: str = Field(primary_key=True, max_length=32)  # UTC, 2026-01-01T09:00:00Z: sorts
    status: str = Field(max_length=16)  # fired or missed
    worker: str = Field(max_length=128)
    run: str | None = Field(default=None, max_length=64)
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    recorded: float = 0.0  # seconds since the epoch, when the row was inserted


TICKS = TickRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class TickRecord:
    schedule: str
    tick: str
    status: str
    worker: str
    run: str | None
    error: str | None


class ScheduleTicks:
    """The tick rows of one worker (``owner``) on a store's database."""

    def __init__(self, store: Database, owner: str) -> None:
        self.store = store
        self.owner = owner
        with store.translate("prepare the schedule table"):
            try:
                SQLModel.metadata.create_all(store.engine, tables=[TICKS])
            except SQLAlchemyError:  # another worker made it meanwhile
                SQLModel.metadata.create_all(store.engine, tables=[TICKS])

    def claim(self, schedule: str, tick: str, status: str) -> bool:
        """Inserts the tick's row as ``status``; False when another worker's row is there."""
        values = {
            "schedule": schedule,
            "tick": tick,
            "status": status,
            "worker": self.owner,
            "recorded": time.time(),
        }
        with self.store.translate("write"), self.store.engine.begin() as conn:
            dialect = conn.dialect.name
            if dialect in ("postgresql", "sqlite"):
                module = postgresql if dialect == "postgresql" else sqlite
                statement = module.insert(TICKS).values(**values).on_conflict_do_nothing()
                # The row inserted comes back; none when the key was taken. (rowcount
                # cannot tell: through psycopg it is -1 for this statement, either way.)
                inserted = conn.execute(statement.returning(TICKS.c.tick)).first()
                return inserted is not None
        try:  # another database: the primary key refuses the second insert
            with self.store.translate("write"), self.store.engine.begin() as conn:
                conn.execute(insert(TICKS).values(**values))
        except IntegrityError:
            return False
        return True

    def finish(self, schedule: str, tick: str, *, run: str | None, error: str | None) -> None:
        """Records the run a fired tick started, or why it could not start one."""
        with self.store.translate("write"), self.store.engine.begin() as conn:
            conn.execute(
                update(TICKS)
                .where(TICKS.c.schedule == schedule, TICKS.c.tick == tick)
                .values(run=run, error=error)
            )

    def last(self, schedule: str) -> str | None:
        """The latest tick of ``schedule`` that any worker handled."""
        query = select(TICKS.c.tick).where(TICKS.c.schedule == schedule)
        with self.store.translate("read"), self.store.engine.connect() as conn:
            row = conn.execute(query.order_by(TICKS.c.tick.desc()).limit(1)).first()
        return None if row is None else str(row[0])

    def records(self, schedule: str) -> list[TickRecord]:
        """Every handled tick of ``schedule``, oldest first."""
        query = (
            select(
                TICKS.c.schedule,
                TICKS.c.tick,
                TICKS.c.status,
                TICKS.c.worker,
                TICKS.c.run,
                TICKS.c.error,
            )
            .where(TICKS.c.schedule == schedule)
            .order_by(TICKS.c.tick)
        )
        with self.store.translate("read"), self.store.engine.connect() as conn:
            return [TickRecord(*row) for row in conn.execute(query)]
