"""``roost.run`` and ``roost.run_sync``: a flow run to its end in one call.

``Runner`` steps a run one call at a time (``start``, ``continue_``, ``retry``),
each returning where the run came to rest. ``run`` drives those steps for the
common case: it starts the run, and at each pause (a person's turn, or a tool
call waiting for approval, a manual choice) asks ``answer(pause)`` what to
say, until the run ends or nobody answers. Callers get values (``RunView``,
``Pause``: ``roost.runview``), never the engine's live state. ``run_sync`` is
the same for code without an event loop. ``replay`` re-executes a recorded run
and ``flow_of`` reads the flow a recorded run follows.

A flow with a ``memory:`` section remembers across runs from Python as it does
from the command line: in the run store's memory (``memory_bank``).
"""

from __future__ import annotations

import asyncio
import os
import warnings
from typing import TYPE_CHECKING

from roost.driving import Answer, Callback, Step, drive, view
from roost.errors import RunStateError, TelemetryError, UsageError
from roost.flow.budget_checks import check_budget
from roost.ports import EventLog, ImageStore, MemoryBank, MemoryLog, new_run_id
from roost.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from roost.engine import Runner
    from roost.engine.replay import ReplayReport
    from roost.events import Event
    from roost.flow import Flow
    from roost.runview import RunView
    from roost.store.lazy_memory import LazyMemory


async def run(
    flow: Flow | str | os.PathLike[str],
    message: str | None = None,
    *,
    answer: Answer | None = None,
    log: EventLog | None = None,
    memory: MemoryBank | None = None,
    budget: float | None = None,
) -> RunView:
    """Runs ``flow`` until it ends, stops at an error, or pauses with nobody to answer.

    ``flow`` is a ``Flow`` or the path of a flow file (loaded with
    ``roost.load_flow``, its tools checked). ``message`` starts the run (default:
    the flow's ``start`` content) and is sent as written. At each pause,
    ``answer(pause)`` is called (it may be async) with a ``roost.Pause``: its
    ``kind`` says whether a person is asked (``person``), tool calls wait for
    approval (``tool_approval``; ``pause.tool_calls``) or a person chooses who
    speaks next (``manual_choice``; ``pause.choices``). It returns the text to
    say (at a tool approval, ``yes`` runs the calls and other text refuses them
    with that reason; ``""`` at a person's turn lets the node answer itself), or
    ``pause.approve()``, ``pause.refuse(reason)``, ``pause.let_answer()``; or
    None to leave the run paused, as does having no ``answer`` at all.

    ``log`` keeps the events (default: a ``MemoryLog``, gone with the process).
    A log that already holds a paused run goes on from its pause (``message``
    is then refused); a run stopped at an error, or terminated, is returned as
    it is (``Runner(flow, log).retry()`` redoes a failed step).

    ``memory`` keeps and recalls what a flow's ``memory:`` section (or a
    sub-flow's) remembers; by default ``memory_bank(log=log)``: the memory of
    ``log``'s store, or of the store the command line would use.

    ``budget`` sets the run's cost limit in US dollars (as ``roost run --budget``):
    a model call that would pass it is not made and the run ends (or, with the
    flow's ``on_exhausted: ask``, pauses with ``kind`` ``budget``: answer it with
    ``pause.raise_budget(limit)`` or ``pause.stop()``).

    Returns a frozen ``RunView`` of where the run came to rest (``status``
    ``terminated``, ``paused`` or ``error``; ``answer``, ``usage``, ``cost``,
    ``history``). Raises ``FlowError`` for a flow that does not load and
    ``RunStateError`` for a run that cannot go on as asked.
    """
    runner, own = _runner(flow, log, memory, budget)
    try:
        return await _drive(runner, message, answer)
    finally:
        if own is not None:
            own.close()  # the store it opened, if the run stored or recalled


def _runner(
    flow: Flow | str | os.PathLike[str],
    log: EventLog | None,
    memory: MemoryBank | None,
    budget: float | None,
) -> tuple[Runner, Workspace | None]:
    """The runner ``run`` drives, and the workspace it opened for the flow's memory (None
    when ``memory`` was given or the flow remembers nothing), which ``run`` closes."""
    log = log if log is not None else MemoryLog(new_run_id())
    loaded = _as_flow(flow)
    own = Workspace.beside(log) if memory is None and _may_remember(loaded) else None
    bank = memory if own is None else own.memory
    runner = Workspace.runner_in_memory(loaded, log, memory=bank, on_event=_tracing(log))
    if budget is not None:
        check_budget(loaded, budget)
        runner.set_budget(budget)
    return runner, own


async def _drive(runner: Runner, message: str | None, answer: Answer | None) -> RunView:
    """Starts the run (or goes on from its pause) and answers its pauses while ``answer`` does."""
    first: Step | None = None
    if runner.state.status == "new":
        first = lambda runner: runner.start(message)  # noqa: E731
    elif message is not None:
        raise RunStateError(
            f"run {runner.run_id} has started already: a message starts a new run; "
            "give the log of a new run, or answer this one's pause with answer="
        )
    state = await drive(runner, first, None if answer is None else Callback(answer))
    return view(runner, state)


def run_sync(
    flow: Flow | str | os.PathLike[str],
    message: str | None = None,
    *,
    answer: Answer | None = None,
    log: EventLog | None = None,
    memory: MemoryBank | None = None,
    budget: float | None = None,
) -> RunView:
    """``roost.run`` for code that is not async: runs the flow in an event loop of its own.

    It cannot be called where an event loop is already running (inside an
    ``async def``, a notebook's cell, a web framework's handler): there, use
    ``await roost.run(...)``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run(flow, message, answer=answer, log=log, memory=memory, budget=budget))
    raise UsageError(
        "roost.run_sync cannot run inside a running event loop (an async function, "
        "a notebook): use `await roost.run(...)` instead"
    )


async def replay(
    run: EventLog | Sequence[Event], flow: Flow | str | os.PathLike[str] | None = None
) -> ReplayReport:
    """Re-executes a recorded run with its recorded answers and compares event by event.

    ``run`` is the run's log (its images read again from the log's store) or its
    events. ``flow`` None replays each part under the flow it recorded; a flow
    (or a flow file's path) replays the run under it instead. The report says
    whether the replay is ``identical``, else the first ``difference``.
    """
    from roost.engine.replay import replay_run

    events, images = _recorded(run)
    return await replay_run(None if flow is None else _as_flow(flow), events, images=images)


def flow_of(run: EventLog | Sequence[Event], *, shown: bool = False) -> Flow:
    """The flow a recorded run follows now, loaded from the text its log recorded.

    That of its latest ``flow`` event, else its ``run_start``'s; nothing it names
    is imported or started. ``shown`` reads no environment (only to show the flow).
    Raises ``EventLogError`` when the log holds no ``run_start``.
    """
    from roost.engine.flows import flow_in_log as recorded_flow

    events, _ = _recorded(run)
    ref = run.run_id if isinstance(run, EventLog) else (events[0].run if events else "run")
    return recorded_flow(events, ref, shown=shown)


def _recorded(run: EventLog | Sequence[Event]) -> tuple[list[Event], ImageStore | None]:
    """A run's events, and its log's image store (None for bare events)."""
    if isinstance(run, EventLog):
        from roost.store.images import images_of

        return run.load(), images_of(run)
    return list(run), None


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
    if db is None and log is not None:
        return Workspace.beside(log).memory
    from roost.store.urls import resolve_url

    return Workspace(resolve_url(db)).memory


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
