"""``roost.run`` and ``roost.run_sync``: a flow run to its end in one call.

``Runner`` steps a run one call at a time (``start``, ``continue_``, ``retry``),
each returning where the run came to rest. ``run`` drives those steps for the
common case: it starts the run, and at each pause (a person's turn, or a tool
call waiting for approval) asks ``answer(state)`` what to say, until the run
ends or nobody answers. ``run_sync`` is the same for code without an event loop.

A flow with a ``memory:`` section remembers across runs from Python as it does
from the command line: in the run store's memory (``memory_bank``).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeAlias

from roost.engine import Runner, RunState
from roost.errors import RunStateError, TelemetryError, UsageError
from roost.eventlog import EventLog, MemoryBank, MemoryLog, new_run_id

if TYPE_CHECKING:
    from roost.events import Event
    from roost.flow import Flow
    from roost.store.lazy_memory import LazyMemory

# What ``answer`` may be: a function or a coroutine function of the paused state.
Answer: TypeAlias = Callable[[RunState], str | Awaitable[str | None] | None]


async def run(
    flow: Flow | str | os.PathLike[str],
    message: str | None = None,
    *,
    answer: Answer | None = None,
    log: EventLog | None = None,
    memory: MemoryBank | None = None,
) -> RunState:
    """Runs ``flow`` until it ends, stops at an error, or pauses with nobody to answer.

    ``flow`` is a ``Flow`` or the path of a flow file (loaded with
    ``roost.load_flow``, its tools checked). ``message`` starts the run (default:
    the flow's ``start`` content) and is sent as written. At each pause,
    ``answer(state)`` is called (it may be async): ``state.pending`` is the
    interrupt, its ``reason`` says whether a person is asked (``human``) or a
    tool call waits for approval (``tool_approval``: ``yes`` or ``y`` runs it, ``no``
    or ``n`` refuses it, other text refuses it as the reason; ``tool_plan``
    for all the calls of a model answer at once). The text
    it returns answers the pause; ``""`` lets the waiting node answer itself;
    ``None`` leaves the run paused, as does having no ``answer`` at all.

    ``log`` keeps the events (default: a ``MemoryLog``, gone with the process).
    A log that already holds a paused run goes on from its pause (``message``
    is then refused); a run stopped at an error, or terminated, is returned as
    it is (``Runner(flow, log).retry()`` redoes a failed step).

    ``memory`` keeps and recalls what a flow's ``memory:`` section (or a
    sub-flow's) remembers; by default ``memory_bank(log=log)``: the memory of
    ``log``'s store, or of the store the command line would use.

    Returns the state the run came to rest in: ``terminated``, ``paused`` or
    ``error``. Raises ``FlowError`` for a flow that does not load and
    ``RunStateError`` for a run that cannot go on as asked.
    """
    log = log if log is not None else MemoryLog(new_run_id())
    loaded = _as_flow(flow)
    own = memory_bank(log=log) if memory is None and _may_remember(loaded) else None
    runner = Runner(loaded, log, on_event=_tracing(log), memory=memory if own is None else own)
    try:
        return await _drive(runner, message, answer)
    finally:
        if own is not None:
            own.close()  # the store it opened, if the run stored or recalled


async def _drive(runner: Runner, message: str | None, answer: Answer | None) -> RunState:
    """Starts the run (or goes on from its pause) and answers its pauses while ``answer`` does."""
    state = runner.state
    if state.status == "new":
        state = await runner.start(message)
    elif message is not None:
        raise RunStateError(
            f"run {runner.run_id} has started already: a message starts a new run; "
            "give the log of a new run, or answer this one's pause with answer="
        )
    while state.status == "paused" and answer is not None:
        reply = answer(state)
        if inspect.isawaitable(reply):
            reply = await reply
        if reply is None:
            break
        if not isinstance(reply, str):
            raise UsageError(
                f"answer returned {type(reply).__name__}: give the answer as text, "
                "or None to leave the run paused"
            )
        state = await runner.continue_(reply)
    return state


def run_sync(
    flow: Flow | str | os.PathLike[str],
    message: str | None = None,
    *,
    answer: Answer | None = None,
    log: EventLog | None = None,
    memory: MemoryBank | None = None,
) -> RunState:
    """``roost.run`` for code that is not async: runs the flow in an event loop of its own.

    It cannot be called where an event loop is already running (inside an
    ``async def``, a notebook's cell, a web framework's handler): there, use
    ``await roost.run(...)``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run(flow, message, answer=answer, log=log, memory=memory))
    raise UsageError(
        "roost.run_sync cannot run inside a running event loop (an async function, "
        "a notebook): use `await roost.run(...)` instead"
    )


def memory_bank(db: str | None = None, *, log: EventLog | None = None) -> LazyMemory:
    """The memory of a run store, for ``Runner(..., memory=...)``; opened when first used.

    The store is the one ``db`` names (a SQLite path or a database URL); else
    ``log``'s own, when ``log`` is kept in a ``SqlStore``; else the one
    ``ROOST_DB`` names; else ``.roost/roost.db`` in the nearest folder, from the
    current one up, that has a ``.roost`` folder (the current folder when none
    has), as the command line finds it. Which store it is, is settled now; it is
    opened (a missing SQLite file made) only when a run first stores or recalls.
    ``close()`` lets go of a store it opened (never of ``log``'s).
    """
    from roost.store.lazy_memory import LazyMemory
    from roost.store.memory import SqlMemory
    from roost.store.sql import SqlStore
    from roost.store.sqllog import SqlLog
    from roost.store.urls import resolve_url

    if db is None and isinstance(log, SqlLog) and isinstance(log.store, SqlStore):
        logs_store = log.store
        return LazyMemory(lambda: SqlMemory(logs_store))
    url = resolve_url(db)
    opened: list[SqlStore] = []

    def open_memory() -> SqlMemory:
        opened.append(SqlStore(url))
        return SqlMemory(opened[-1])

    def close() -> None:
        while opened:
            opened.pop().close()

    return LazyMemory(open_memory, close)


def _may_remember(flow: Flow) -> bool:
    from roost.store.lazy_memory import may_remember

    return may_remember(flow)


def _tracing(log: EventLog) -> Callable[[Event], None] | None:
    """The run's tracing when the ``OTEL_*`` variables ask for it (a warning when they
    ask for what cannot be done: the run goes on untraced)."""
    from roost.telemetry import tracing_from_environment

    try:
        return tracing_from_environment(log)
    except TelemetryError as error:
        warnings.warn(f"{error}; the run is not traced", RuntimeWarning, stacklevel=3)
        return None


def _as_flow(flow: Flow | str | os.PathLike[str]) -> Flow:
    if isinstance(flow, str | os.PathLike):
        from roost.loading import load_flow

        return load_flow(flow)
    return flow
