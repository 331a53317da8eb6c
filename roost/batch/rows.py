"""One row of a batch: an ordinary stored run, started, resumed or left as it finished.

A row's run id is made from the batch id, the row's line and a digest of what
the row says, so that running the batch again finds the row's run: a run that
finished (terminated or paused) is left alone, one that stopped at an error or
whose process died mid-step is retried from its log, and a row that has no run
yet is started. A row edited since gets a new run. Whoever runs the row (this
process, or a Ray worker retrying a lost one) goes through ``run_row``, so a
row is never run twice: a second writer of the same run gets
``ConcurrentRunError`` from the store and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from roost.driving import Step, drive, leave_paused
from roost.errors import RoostError, RunNotFoundError
from roost.events import ErrorEvent, Event
from roost.ports import StampedLog
from roost.pricing import reported_cost
from roost.runstate import RunState, fold

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from roost.batch.inputs import BadRow, Row
    from roost.engine import Runner
    from roost.flow.models import Flow
    from roost.ports import EventLog
    from roost.store.sql import SqlStore
    from roost.workspace import Workspace

# "running": cut off mid-run; "skipped": never started (a drained batch). Both run next time.
RowStatus = Literal["terminated", "paused", "error", "running", "invalid", "skipped"]
FINISHED = ("terminated", "paused")


@dataclass(frozen=True, slots=True)
class RowResult:
    """What became of one row: a line of the results file."""

    row: int
    run: str | None
    status: RowStatus
    final: str | None = None
    tokens: int = 0
    cost: float | None = None
    error: str | None = None
    data: Any = None  # the answer's structured data, when its message has some

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def as_dict(self) -> dict[str, Any]:
        """The result's fields; ``data`` only when the answer has some."""
        fields = {
            "row": self.row, "run": self.run, "status": self.status, "final": self.final,
            "tokens": self.tokens, "cost": self.cost, "error": self.error,
        }  # fmt: skip
        if self.data is not None:
            fields["data"] = self.data
        return fields


def run_id_for(batch: str, row: Row) -> str:
    """The id of ``row``'s run: the batch, the row's line, and a digest of what it says."""
    said = json.dumps([row.message, row.vars], sort_keys=True, ensure_ascii=False, default=str)
    digest = hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()[:4]
    return f"{batch}-{row.line}-{digest}"


def over_budget(line: int, budget: float) -> RowResult:
    """A row the batch's ``--budget`` left unstarted, for the next run of the command."""
    from roost.pricing import format_amount

    spent = format_amount(budget)
    why = f"line {line}: not run: the batch's rows spent its budget of {spent}; run again"
    return RowResult(line, None, "skipped", error=why)


def bad_row(row: BadRow) -> RowResult:
    return RowResult(row.line, None, "invalid", error=f"line {row.line}: {row.problem}")


async def run_row(
    workspace: Workspace,
    flow: Flow,
    row: Row,
    batch: str,
    run_id: str,
    *,
    new: bool = False,
    watch: set[Runner] | None = None,
) -> RowResult:
    """Runs ``row`` to where it comes to rest (or finds it finished); never raises a RoostError.

    ``workspace`` keeps the row's run, its sub-flow runs and images in its store,
    and its memory, so that one row recalls what another, or any run of the
    store, stored. ``new``: the row's run was not in the store when the batch
    began, so it is started without looking it up (a run made meanwhile by
    another writer is refused by the store, and the row is an error retried next time).
    ``watch`` holds the row's Runner while it runs (a drain cancels its step).
    """
    try:
        state, log = await _advance(workspace, flow, row, batch, run_id, new, watch)
        return result_of(row.line, run_id, state, log.load())
    except RoostError as error:
        return RowResult(row.line, run_id, "error", error=f"line {row.line}: {error}")


async def _advance(
    workspace: Workspace,
    flow: Flow,
    row: Row,
    batch: str,
    run_id: str,
    new: bool,
    watch: set[Runner] | None,
) -> tuple[RunState, EventLog]:
    store = workspace.store
    log: EventLog | None = None if new else _stored_log(store, run_id)
    if log is None:
        log = StampedLog(store.new_log(run_id), batch=batch, row=row.line)
    # A row's start.images are kept in the store (its stamped log names no store itself).
    runner = workspace.runner(flow, log, memory=workspace.memory, images=workspace.images)
    state = runner.state
    if state.status in FINISHED:
        return state, log
    # New: started; stopped at an error, or left mid-step by a process that died: retried.
    # A row answers no pause: its run waits there for a person (roost continue).
    first = _start(row.message) if state.status == "new" else _retry
    watching = watch if watch is not None else set()
    watching.add(runner)
    try:
        return await drive(runner, first, leave_paused), log
    finally:
        watching.discard(runner)


def _start(message: str | None) -> Step:
    return lambda runner: runner.start(message)


def _retry(runner: Runner) -> Awaitable[RunState]:
    return runner.retry()


def _stored_log(store: SqlStore, run_id: str) -> EventLog | None:
    try:
        return store.log(run_id)
    except RunNotFoundError:
        return None


def result_of(line: int, run_id: str, state: RunState, events: Sequence[Event]) -> RowResult:
    """A row's result from its run's state and events (which price its model calls)."""
    status: RowStatus = state.status if state.status != "new" else "running"  # type: ignore[assignment]
    error = None
    if isinstance(state.pending, ErrorEvent):
        error = f"line {line}: error at {state.pending.from_}: {state.pending.content}"
    usage = state.usage
    return RowResult(
        line, run_id, status,
        final=state.answer,
        tokens=usage.prompt_tokens + usage.completion_tokens,
        cost=reported_cost(events),
        error=error,
        data=state.answer_data,
    )  # fmt: skip


def finished_result(line: int, run_id: str, events: list[Event]) -> RowResult:
    """The result of a row whose run finished before this batch command began."""
    return result_of(line, run_id, fold(events), events)
