"""Who may step a run now, and the messages that wait for it: leases and inboxes in the store.

``roost serve`` processes that share a database take turns on each run. A
worker steps a run only while it holds the run's lease, a row naming it and
an expiry time that it pushes forward while the step runs. A worker that dies
stops pushing; once its lease has expired another worker takes the run, and
finds the work left (a step to redo, messages to deliver) in the database.
Free runs are found with ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL,
so two workers never claim the same one; SQLite has one writer at a time.

Messages sent to a run wait in its inbox, in order, until the worker holding
the lease delivers them. A worker gives its lease back only when the inbox is
empty, checked under the row's lock: a message that arrives meanwhile is
never left waiting with nobody to deliver it.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Float,
    Integer,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import SQLAlchemyError

from roost.errors import RoostError, RunStateError
from roost.store.schema import METADATA

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.store.schema import Database


class QueueFull(RoostError):
    """A run's inbox holds as many messages as it may."""


# Core tables, as the store's others are: opening a store to step a run builds no
# pydantic model or ORM mapping (the command line holds leases too).
# One run's lease: who steps it, until when, and whether there is work for it.
LEASES = Table(
    "serve_leases",
    METADATA,
    Column("run", String(64), primary_key=True),
    Column("owner", String(128), nullable=True),
    Column("expires", Float, nullable=False, default=0.0),  # epoch seconds; before now: free
    Column("active", Boolean, nullable=False, default=False),  # work a worker should do
    Column("cancel", Boolean, nullable=False, default=False),  # the owner is asked to stop
)

# A message waiting for a run, in the order it came.
INBOX = Table(
    "serve_inbox",
    METADATA,
    Column("id", Integer, primary_key=True),
    Column("run", String(64), nullable=False, index=True),
    Column("sender", String(256), nullable=True),  # the node it speaks as, if named
    Column("content", Text, nullable=False),
)


@dataclass(frozen=True, slots=True)
class Queued:
    """A message in a run's inbox."""

    id: int
    sender: str | None
    content: str


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a run's lease, if anyone: the worker and until when."""

    owner: str | None
    expires: float

    def alive(self, now: float) -> bool:
        return self.owner is not None and self.expires >= now


class RunLeases:
    """The leases and inboxes of one worker (``owner``) on a store's database."""

    def __init__(self, store: Database, owner: str, *, seconds: float = 30.0) -> None:
        self.store = store
        self.owner = owner
        self.seconds = seconds
        with store.translate("prepare the serve tables"):
            self._create_tables()

    # ------------------------------------------------------------------ claiming

    def claim(self, run_id: str, *, work: bool = False) -> bool:
        """Takes the run's lease if it is free, expired or ours; ``work`` marks work to do."""
        now = time.time()
        with self._transaction() as conn:
            self._ensure_row(conn, run_id)
            values: dict[str, Any] = {"owner": self.owner, "expires": now + self.seconds}
            if work:
                values["active"] = True
            taken = conn.execute(
                update(LEASES)
                .where(LEASES.c.run == run_id)
                .where(
                    (LEASES.c.owner.is_(None))
                    | (LEASES.c.owner == self.owner)
                    | (LEASES.c.expires < now)
                )
                .values(**values)
            )
            return bool(taken.rowcount == 1)

    def claim_due(self, limit: int) -> list[str]:
        """Claims up to ``limit`` runs with work whose lease has expired (a worker died)."""
        now = time.time()
        with self._transaction() as conn:
            query = (
                select(LEASES.c.run)
                .where(LEASES.c.active.is_(True), LEASES.c.expires < now)
                .order_by(LEASES.c.expires)
                .limit(limit)
                .with_for_update(skip_locked=True)  # PostgreSQL: rows another worker locks
            )
            runs = [str(row[0]) for row in conn.execute(query)]
            if runs:
                conn.execute(
                    update(LEASES)
                    .where(LEASES.c.run.in_(runs))
                    .values(owner=self.owner, expires=now + self.seconds, cancel=False)
                )
            return runs

    def renew_all(self, run_ids: list[str]) -> tuple[set[str], set[str]]:
        """Pushes on the expiry of all these leases at once: (those no longer ours, those
        whose step someone asked to cancel). One statement per few hundred runs, so a
        worker stepping a thousand runs does not write a thousand times a second."""
        now = time.time()
        lost: set[str] = set()
        cancels: set[str] = set()
        for start in range(0, len(run_ids), 500):
            chunk = run_ids[start : start + 500]
            with self._transaction() as conn:
                rows = conn.execute(
                    update(LEASES)
                    .where(LEASES.c.run.in_(chunk), LEASES.c.owner == self.owner)
                    .values(expires=now + self.seconds)
                    .returning(LEASES.c.run, LEASES.c.cancel)
                ).all()
                asked = [str(row[0]) for row in rows if row[1]]
                if asked:
                    conn.execute(update(LEASES).where(LEASES.c.run.in_(asked)).values(cancel=False))
            kept = {str(row[0]) for row in rows}
            lost.update(run for run in chunk if run not in kept)
            cancels.update(asked)
        return lost, cancels

    def release(self, run_id: str) -> bool:
        """Gives the lease back when the inbox is empty; False (still ours) when it is not."""
        with self._transaction() as conn:
            if self._lock(conn, run_id) is None:
                return True
            if self._count(conn, run_id):
                return False
            conn.execute(
                update(LEASES)
                .where(LEASES.c.run == run_id, LEASES.c.owner == self.owner)
                .values(owner=None, expires=0.0, active=False, cancel=False)
            )
            return True

    def hand_back(self, run_id: str, *, after: float = 0.0) -> None:
        """Lets another worker take the run's work, at once or ``after`` seconds from now."""
        with self._transaction() as conn:
            conn.execute(
                update(LEASES)
                .where(LEASES.c.run == run_id, LEASES.c.owner == self.owner)
                .values(owner=None, expires=time.time() + after if after else 0.0)
            )

    def holder(self, run_id: str) -> Holder:
        with self.store.translate("read"), self.store.engine.connect() as conn:
            row = conn.execute(
                select(LEASES.c.owner, LEASES.c.expires).where(LEASES.c.run == run_id)
            ).first()
        return Holder(None, 0.0) if row is None else Holder(row[0], float(row[1]))

    def ask_cancel(self, run_id: str) -> bool:
        """Asks the worker stepping the run to cancel; False when no live worker holds it."""
        with self._transaction() as conn:
            done = conn.execute(
                update(LEASES)
                .where(
                    LEASES.c.run == run_id,
                    LEASES.c.owner.is_not(None),
                    LEASES.c.expires >= time.time(),
                )
                .values(cancel=True)
            )
            return bool(done.rowcount == 1)

    # ------------------------------------------------------------------ the inbox

    def enqueue(self, run_id: str, content: str, sender: str | None, limit: int) -> int:
        """Adds a message to the run's inbox and marks work; the number waiting now.

        Raises QueueFull when ``limit`` messages wait already.
        """
        with self._transaction() as conn:
            self._ensure_row(conn, run_id)
            self._lock(conn, run_id)
            waiting = self._count(conn, run_id)
            if waiting >= limit:
                raise QueueFull(
                    f"run {run_id} has {waiting} messages waiting, as many as it may; "
                    "send again once it has taken some"
                )
            conn.execute(insert(INBOX).values(run=run_id, sender=sender, content=content))
            conn.execute(update(LEASES).where(LEASES.c.run == run_id).values(active=True))
            return waiting + 1

    def inbox(self, run_id: str) -> list[Queued]:
        """The messages waiting for the run, oldest first."""
        query = (
            select(INBOX.c.id, INBOX.c.sender, INBOX.c.content)
            .where(INBOX.c.run == run_id)
            .order_by(INBOX.c.id)
        )
        with self.store.translate("read"), self.store.engine.connect() as conn:
            return [Queued(int(row[0]), row[1], str(row[2])) for row in conn.execute(query)]

    def waiting(self, run_id: str) -> int:
        with self.store.translate("read"), self.store.engine.connect() as conn:
            return self._count(conn, run_id)

    def remove(self, ids: list[int]) -> None:
        """Takes delivered (or refused) messages out of the inbox."""
        if ids:
            with self._transaction() as conn:
                conn.execute(delete(INBOX).where(INBOX.c.id.in_(ids)))

    def clear(self, run_id: str) -> int:
        """Empties the run's inbox; the number of messages dropped."""
        with self._transaction() as conn:
            return int(conn.execute(delete(INBOX).where(INBOX.c.run == run_id)).rowcount)

    # ------------------------------------------------------------------ internals

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self.store.translate("write"), self.store.engine.begin() as conn:
            yield conn

    def _ensure_row(self, conn: Connection, run_id: str) -> None:
        """Makes the run's lease row unless it is there (another worker may make it too)."""
        dialect = conn.dialect.name
        if dialect in ("postgresql", "sqlite"):
            # The dialects' own INSERT, imported here: PostgreSQL's is not for every SQLite run.
            from sqlalchemy.dialects import postgresql, sqlite

            module = postgresql if dialect == "postgresql" else sqlite
            statement = module.insert(LEASES).values(run=run_id)
            conn.execute(statement.on_conflict_do_nothing(index_elements=["run"]))
            return
        found = conn.execute(select(LEASES.c.run).where(LEASES.c.run == run_id)).first()
        if found is None:
            conn.execute(insert(LEASES).values(run=run_id))

    def _lock(self, conn: Connection, run_id: str) -> Any:
        """Locks the run's lease row until the transaction ends (PostgreSQL; SQLite has one writer).

        Inbox changes and the release both lock it first, so each sees the other's effect.
        """
        query = select(LEASES.c.run).where(LEASES.c.run == run_id).with_for_update()
        return conn.execute(query).first()

    @staticmethod
    def _count(conn: Connection, run_id: str) -> int:
        query = select(func.count()).select_from(INBOX).where(INBOX.c.run == run_id)
        return int(conn.execute(query).scalar() or 0)

    def _create_tables(self) -> None:
        try:
            METADATA.create_all(self.store.engine, tables=[LEASES, INBOX])
        except SQLAlchemyError:
            # Two workers starting together may both try; the one that lost finds them made.
            METADATA.create_all(self.store.engine, tables=[LEASES, INBOX])


STEPPER = "step:"  # owners that step runs without taking their messages


def takes_messages(owner: str | None) -> bool:
    """Whether a lease's owner is a server worker, which delivers the run's inbox; the
    command line and sub-flows driven in their parent's process do not."""
    return owner is not None and not owner.startswith(STEPPER)


def stepper(owner: str | None) -> str:
    """Who a lease's owner is, as a line says it."""
    if owner is None:
        return "nobody"
    if owner.startswith(STEPPER):
        name = owner.removeprefix(STEPPER)
        return name if name.startswith("the command line") else f"a step of worker {name}"
    return f"worker {owner}"


class Stepping:
    """The leases a process holds on the stored runs it steps outside a server's sessions:
    the runs a command steps, and the sub-flow runs a step drives in its parent's process.

    Held only in a store a server has used (its lease table is there): a server that
    shares the store then answers 409 to a retry or message for these runs, instead of
    stepping them a second time. Renewed by a thread of its own, so a busy event loop
    cannot let them lapse; handed back by ``release``.
    """

    def __init__(self, store: Database, owner: str, *, seconds: float = 30.0) -> None:
        self.leases: RunLeases | None = None
        with store.translate("read"), store.engine.connect() as conn:
            shared = conn.dialect.has_table(conn, LEASES.name)
        if shared:
            self.leases = RunLeases(store, STEPPER + owner, seconds=seconds)
        self.seconds = seconds
        self._held: dict[str, str] = {}  # run id -> the group it is released with
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def hold(self, run_id: str, group: str = "") -> None:
        """Takes the run's lease for this process; StepTaken when someone else holds it."""
        if self.leases is None or run_id in self._held:
            return
        if not self.leases.claim(run_id):
            holder = stepper(self.leases.holder(run_id).owner)
            raise StepTaken(
                f"run {run_id} is being stepped by {holder}; try again once its step has ended"
            )
        with self._lock:
            self._held[run_id] = group
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew, daemon=True)
                self._renewer.start()

    def release(self, group: str = "") -> None:
        """Hands back the leases held with ``group``."""
        with self._lock:
            runs = [run for run, held in self._held.items() if held == group]
            for run in runs:
                del self._held[run]
        for run in runs:
            if self.leases is not None:
                with suppress(RoostError):  # the store went away: the lease expires anyway
                    self.leases.hand_back(run)

    def close(self) -> None:
        """Hands back every lease and stops renewing."""
        for group in set(self._held.values()):
            self.release(group)
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(5)

    def _renew(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            with self._lock:
                runs = list(self._held)
            if runs and self.leases is not None:
                with suppress(RoostError):  # tried again at the next turn
                    self.leases.renew_all(runs)


class StepTaken(RunStateError):
    """Another process steps the run now."""
