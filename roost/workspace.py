"""Where stored runs are wired: one run store, and the runners, logs and memory of its runs.

``roost.engine.defaults`` picks what a Runner calls (providers, tools); a
``Workspace`` picks where a run keeps what it makes beside its own log: the
logs of its sub-flow runs, the memory its flows share, the images its messages
carry. Every way of running a flow makes its Runner here: ``roost.run``,
``roost run``/``continue``/``retry``, ``roost chat``, ``roost batch`` and
``roost serve``. The store is opened when first used, so a flow that keeps
nothing beside its log never opens it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.sources import Sources
from roost.ports import EventLog, ImageStore, MemoryBank, MemoryImages, MemoryLog

if TYPE_CHECKING:
    from roost.engine.calls import TextSink
    from roost.engine.runner import EventSink
    from roost.flow.models import Flow
    from roost.store.images import SqlImages
    from roost.store.lazy_memory import LazyMemory
    from roost.store.sql import SqlStore

Hold = Callable[[str], object]  # told each sub-flow run's id as its log is opened


class Workspace:
    """One run store (the one ``db`` names, or ``store``) and what its runs keep in it.

    ``memory`` is the store's memory, shared by every run made here; ``close()``
    lets go of a store this workspace opened (never of one it was given).
    """

    def __init__(self, db: str | None = None, *, store: SqlStore | None = None) -> None:
        self.db = db
        self._store = store
        self._own = store is None  # a store it opens is its own to close
        self._images: SqlImages | None = None
        self.memory: LazyMemory = _memory_of(self)

    @classmethod
    def beside(cls, log: EventLog) -> Workspace:
        """The workspace of a run handed over as its log: the log's store when it is kept in
        one, else the store the command line would use (which one is settled now)."""
        from roost.store.sql import SqlStore
        from roost.store.sqllog import SqlLog
        from roost.store.urls import resolve_url

        if isinstance(log, SqlLog) and isinstance(log.store, SqlStore):
            return cls(store=log.store)
        return cls(resolve_url(None))

    @property
    def store(self) -> SqlStore:
        """The run store, opened (a missing SQLite file made) at its first use."""
        if self._store is None:
            from roost.store.sql import SqlStore

            self._store = SqlStore(self.db)
        return self._store

    @property
    def images(self) -> SqlImages:
        """The store's images, by hash (one image store for every run made here)."""
        if self._images is None:
            from roost.store.images import SqlImages

            self._images = SqlImages(self.store)
        return self._images

    def new_log(self, run_id: str) -> EventLog:
        """The log of a new run kept in the store."""
        return self.store.new_log(run_id)

    def child_logs(self, hold: Hold | None = None) -> Callable[[str], EventLog]:
        """Logs for sub-flow runs, kept in the store beside their parent; ``hold`` is told
        each one's id (to lease it while the parent's step runs)."""

        def child_log(run_id: str) -> EventLog:
            opened = self.store.child_log(run_id)
            if hold is not None:
                hold(run_id)
            return opened

        return child_log

    def memory_for(self, flow: Flow) -> MemoryBank | None:
        """The store's memory for a flow that may remember (a ``memory:`` section or a
        sub-flow), else None."""
        from roost.store.lazy_memory import may_remember

        return self.memory if may_remember(flow) else None

    def runner(
        self,
        flow: Flow,
        log: EventLog,
        *,
        memory: MemoryBank | None,
        images: ImageStore | None = None,
        hold: Hold | None = None,
        on_event: EventSink | None = None,
        on_text: TextSink | None = None,
    ) -> Runner:
        """A Runner of ``flow`` on ``log`` whose sub-flow runs are kept in the store.

        ``images`` default to where ``log`` keeps them (its store's table, a run
        file's folder); ``memory`` is the bank its flows remember in.
        """
        from roost.store.images import images_of

        sources = Sources(
            memory=memory,
            images=images if images is not None else images_of(log),
        )
        return Runner(
            flow=flow,
            log=log,
            sources=sources,
            on_event=on_event,
            on_text=on_text,
            child_log=self.child_logs(hold),
        )

    @staticmethod
    def runner_in_memory(
        flow: Flow, log: EventLog, *, memory: MemoryBank | None, on_event: EventSink | None
    ) -> Runner:
        """A Runner of ``flow`` on a log its caller chose (``roost.run``): only its memory
        is the store's; its sub-flow runs and images live with the Runner, in memory."""
        return Runner(
            flow=flow,
            log=log,
            on_event=on_event,
            child_log=MemoryLog,
            sources=Sources(memory=memory, images=MemoryImages()),
        )

    def close(self) -> None:
        """Lets go of the store this workspace opened; a later use opens it again."""
        if self._own and self._store is not None:
            self._store.close()
            self._store = None
            self._images = None


def _memory_of(workspace: Workspace) -> LazyMemory:
    """The workspace's memory, opened (and its store with it) at its first use."""
    from roost.store.lazy_memory import LazyMemory

    def open_memory() -> MemoryBank:
        from roost.store.memory import SqlMemory

        return SqlMemory(workspace.store)

    return LazyMemory(open_memory, workspace.close)
