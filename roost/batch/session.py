"""One ``roost batch`` command: plan the rows, run those without a finished run, report all.

The rows run here (``run_local``) or as Ray tasks (``roost.batch.ray_tasks``);
either way each result is counted on the progress bar as it arrives, and the
results file lists every row, the ones that had finished before included.
Interrupted (Ctrl-C), the command writes the results it has: the rows left
running are retried from their logs the next time. Sent SIGTERM, it drains
(``roost.batch.drain``): no new row starts, the rows running end within the
grace. Either way a row that did not run is in the results file: ``skipped``
when it never started, ``running`` when it was cut off mid-run; the next run of
the command runs both.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.batch.drain import GRACE_SECONDS, Drain
from roost.batch.inputs import read_inputs
from roost.batch.plan import Plan
from roost.batch.progress import BatchProgress
from roost.batch.results import write_results
from roost.batch.rows import RowResult, RowStatus

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from roost.flow.models import Flow
    from roost.store.sql import SqlStore


@dataclass
class Outcome:
    """Every row's result, and how many of them ran in this command."""

    plan: Plan
    results: dict[int, RowResult] = field(default_factory=dict)
    ran: int = 0
    interrupted: bool = False
    drained: bool = False  # stopped by SIGTERM

    @property
    def ordered(self) -> list[RowResult]:
        return [self.results[index] for index in sorted(self.results)]

    @property
    def failed(self) -> list[RowResult]:
        return [result for result in self.ordered if not result.finished]

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 3 if self.failed else 0


Runs = Callable[[Plan, list[int], Callable[[int, RowResult], None], Drain], None]


def run_batch(
    flow: Flow,
    inputs: Path,
    batch: str,
    store: SqlStore,
    out: Path,
    console: Console,
    runs: Runs,
    grace: float = GRACE_SECONDS,
) -> Outcome:
    """Runs the batch's unfinished rows through ``runs`` and writes every row's result."""
    plan = Plan.of(batch, flow, read_inputs(inputs))
    outcome = Outcome(plan, plan.settled(store))
    todo = [index for index in range(len(plan.items)) if index not in outcome.results]
    settled = list(outcome.results.values())
    finished = sum(1 for result in settled if result.finished)
    console.print(
        f"batch {batch}: {len(plan.items):,} rows; {len(todo):,} to run, "
        f"{finished:,} finished before, {len(settled) - finished:,} invalid"
    )
    progress = BatchProgress(batch, len(plan.items), console, settled)
    drain = Drain(grace)

    def arrived(index: int, result: RowResult) -> None:
        outcome.results[index] = result
        outcome.ran += 1
        progress.done(result)

    try:
        with progress:
            runs(plan, todo, arrived, drain)
    except KeyboardInterrupt:
        outcome.interrupted = True
    outcome.drained = drain.stopping
    outcome.results.update(not_run(plan, store, todo, outcome.results))
    write_results(out, outcome.ordered)
    return outcome


def not_run(
    plan: Plan, store: SqlStore, todo: list[int], results: dict[int, RowResult]
) -> dict[int, RowResult]:
    """The results of the rows of ``todo`` that did not come to rest in this command: those
    with a run in the store were cut off mid-run, the others never started."""
    left = [index for index in todo if index not in results]
    if not left:
        return {}
    stored = {info.id for info in store.runs(batch=plan.batch)}
    found: dict[int, RowResult] = {}
    for index in left:
        item = plan.items[index]
        assert item.run_id is not None
        began = item.run_id in stored
        status: RowStatus = "running" if began else "skipped"
        why = "stopped mid-run" if began else "not run"
        found[index] = RowResult(
            item.line,
            item.run_id if began else None,
            status,
            error=f"line {item.line}: {why}: the batch was stopped; run the same command again",
        )
    return found


def locally(store: SqlStore, concurrency: int, budget: float | None = None) -> Runs:
    """Runs rows in this process, ``concurrency`` at a time, within ``budget`` if given."""
    from roost.batch.local import run_local

    def runs(
        plan: Plan, todo: list[int], arrived: Callable[[int, RowResult], None], drain: Drain
    ) -> None:
        interruptibly(lambda: run_local(plan, store, todo, concurrency, arrived, drain, budget))

    return runs


def interruptibly(go: Callable[[], object]) -> None:
    """Runs the coroutine ``go()`` makes so that Ctrl-C stops it at once, wherever it is.

    asyncio's own handler cancels the main task only at its next suspension, and
    a scripted provider never suspends; a handler of our own raises
    KeyboardInterrupt between two bytecodes. Each append is one transaction, so
    what the store holds stays a clean prefix of each run.
    """

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        asyncio.run(go())  # type: ignore[arg-type]
    finally:
        signal.signal(signal.SIGINT, previous)
