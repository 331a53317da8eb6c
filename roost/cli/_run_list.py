"""What ``roost runs`` lists: the stored runs a listing shows, one row each.

The store and what is left out are said on stderr, so that what a script reads
from stdout stays the list alone.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from roost.cli.lines import print_columns
from roost.cli.logs import open_store
from roost.cli.transcript import age
from roost.errors import RunNotFoundError
from roost.events import BudgetEvent, Event
from roost.store.sql import RunInfo, SqlStore, shown_store

if TYPE_CHECKING:
    from rich.console import Console

COLUMNS = ("id", "flow", "status", "messages", "tokens", "cost", "budget", "age")
# Runs whose budget may have decided something: one still running is not read mid-step.
_AT_REST = ("terminated", "paused")


def print_run_list(
    out: Console,
    db: str | None,
    *,
    flow: str | None,
    status: str | None,
    batch: str | None,
    all_: bool,
) -> None:
    """Prints the stored runs that match, newest first (archived ones only with ``all_``)."""
    hidden = 0
    try:
        store = open_store(db, create=False)
        stored = store.runs(flow=flow, status=status, batch=batch)
        found = [run for run in stored if all_ or not run.archived]
        hidden = len(stored) - len(found)
        where = shown_store(db)
    except RunNotFoundError:
        found, where = [], f"{shown_store(db)} (not made yet: the first run makes it)"
    # On stderr, so that what a script reads from stdout stays the list alone.
    print(f"store: {where}", file=sys.stderr)
    if hidden:
        runs = "1 archived run" if hidden == 1 else f"{hidden} archived runs"
        print(f"{runs} not listed: roost runs --all lists them", file=sys.stderr)
    if not found:
        print("no runs stored")
        return
    print_columns(out, COLUMNS, run_rows(store, found))


def run_rows(store: SqlStore, found: list[RunInfo]) -> list[tuple[str, ...]]:
    """The listing's row of each run: the columns of COLUMNS, as text."""
    rows: list[tuple[str, ...]] = []
    now = datetime.now(UTC)
    decided = store.latest_of_type("budget", [r.id for r in found if r.status in _AT_REST])
    for run in found:
        name = run.flow_name + (f" — {run.title}" if run.title else "")
        fork = f" (fork at {run.fork_at})" if run.fork_at is not None else ""
        shelved = " (archived)" if run.archived else ""
        rows.append(
            (run.id, name + fork + shelved, run.status, str(run.messages), str(run.tokens),
             _cost(store, run), _budget(decided.get(run.id)), age(run.created, now))
        )  # fmt: skip
    return rows


def _budget(last: Event | None) -> str:
    """What a listed run's budget did last: ``stop cost``, ``ask tokens``, ``switch cheap``;
    ``-`` when no budget decided anything."""
    if not isinstance(last, BudgetEvent):
        return "-"
    if last.action == "switch_to":
        return f"switch {last.provider}"
    return f"{last.action} {last.limit}"


def _cost(store: SqlStore, run: RunInfo) -> str:
    """What a listed run's model calls cost, from its events (a run with no tokens: $0.00)."""
    if not run.tokens:
        return "$0.00"  # no call reported usage, so none cost anything: no need to read it
    from roost.pricing import run_cost, short_text

    return short_text(run_cost(store.log(run.id).load()))
