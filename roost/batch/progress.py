"""The batch's progress bar: rows done and failed, calls waiting for a provider's limits,
tokens, cost, rows a second, time left.

Drawn on standard error with rich, refreshed as rows finish; where standard
error is not a terminal (a CI log), its last state is printed once at the end.
Rows that had finished before this command count as done from the start, and
not in the rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from roost.providers import limits

if TYPE_CHECKING:
    from types import TracebackType

    from rich.console import Console

    from roost.batch.rows import RowResult


class RateColumn(ProgressColumn):
    """Rows finished a second, over rich's recent window."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-/s" if speed is None else f"{speed:,.1f}/s", style="cyan")


class FailedColumn(ProgressColumn):
    """Rows failed, then the model calls of this process waiting now for their turn at a
    provider's limits, when some do (read at each refresh: a wait shows while it lasts)."""

    def render(self, task: Task) -> Text:
        shown = Text(f"{task.fields['failed']} failed", style="red")
        count = sum(limits.waiting.values())
        if count:
            shown.append(f" {count:,} waiting for limits", style="yellow")
        return shown


class BatchProgress:
    """Counts the rows as they finish and shows them."""

    def __init__(self, batch: str, total: int, console: Console, settled: list[RowResult]) -> None:
        self.failed = 0
        self.tokens = 0
        self.cost: float | None = None
        for result in settled:  # done from the start, and outside the rate
            self._count(result)
        self._progress = Progress(
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            FailedColumn(),
            TextColumn("{task.fields[tokens]} tokens"),
            TextColumn("cost {task.fields[cost]}"),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=4,
        )
        self._task = self._progress.add_task(batch, total=total, completed=len(settled))
        self._show()

    def _show(self, advance: int = 0) -> None:
        cost = "n/a" if self.cost is None else f"${self.cost:,.4f}"
        self._progress.update(
            self._task,
            advance=advance,
            failed=f"{self.failed:,}",
            tokens=f"{self.tokens:,}",
            cost=cost,
        )

    def _count(self, result: RowResult) -> None:
        self.failed += 0 if result.finished else 1
        self.tokens += result.tokens
        if result.cost is not None:
            self.cost = (self.cost or 0.0) + result.cost

    def done(self, result: RowResult) -> None:
        self._count(result)
        self._show(advance=1)

    def __enter__(self) -> BatchProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._progress.stop()
