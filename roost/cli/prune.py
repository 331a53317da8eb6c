"""``roost runs --prune DATE``: delete the archived runs last active before DATE, after asking.

Only runs someone archived are ever deleted, each with the runs that branch off
it; an archived run that a run staying behind branches off (a fork still in
use) is kept, and the list says why. The question reads one line from standard
input, so a script answers it with ``--yes`` (or ``yes |``); no answer at all
deletes nothing and fails.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta

from roost.approval import approval
from roost.cli.logs import open_store
from roost.errors import RunNotFoundError, UsageError
from roost.store.pruning import prune_plan
from roost.store.sql import RunInfo, shown_store

_DAYS = re.compile(r"(\d{1,5})d")


def prune_runs(db: str | None, when: str, *, flow: str | None, yes: bool) -> None:
    """Deletes the archived runs (of ``flow``) last active before ``when``, once confirmed."""
    before = cutoff(when)
    try:
        store = open_store(db, create=False)
    except RunNotFoundError:
        print(f"store: {shown_store(db)} (not made yet): nothing to delete", file=sys.stderr)
        return
    print(f"store: {shown_store(db)}", file=sys.stderr)
    plan = prune_plan(store, before, flow=flow)
    shown = f"{before:%Y-%m-%d %H:%M} UTC"
    for kept in plan.kept:
        print(f"kept {kept.run.id}: run {kept.because.id} branches off it and stays")
    if not plan.delete:
        print(f"no archived run was last active before {shown}: nothing to delete")
        return
    runs = f"{len(plan.delete)} run" + ("s" if len(plan.delete) != 1 else "")
    print(f"archived, last active before {shown}:")
    for run in plan.delete:
        print(f"  {_row(run)}")
    if not yes and not _confirmed(f"delete {runs} and their events? This cannot be undone."):
        print("nothing deleted")
        return
    events = store.delete([run.id for run in plan.delete])
    print(f"deleted {runs} ({events} events)")


def cutoff(when: str) -> datetime:
    """The time ``--prune`` names: a date or time (UTC unless it says), or ``30d`` ago."""
    if days := _DAYS.fullmatch(when.strip()):
        return datetime.now(UTC) - timedelta(days=int(days.group(1)))
    try:
        moment = datetime.fromisoformat(when.strip())
    except ValueError:
        raise UsageError(
            f"--prune {when!r}: give a date (2026-11-01), a time (2026-11-01T12:00) "
            "or a number of days (30d)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _row(run: RunInfo) -> str:
    title = f" — {run.title}" if run.title else ""
    return (
        f"{run.id}  {run.flow_name}{title}  {run.status}, {run.messages} messages, "
        f"last active {run.updated[:10]}"
    )


def _confirmed(question: str) -> bool:
    """Asks on stderr and reads the answer; UsageError when there is none to read."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    if not answer:
        print(file=sys.stderr)
        raise UsageError("no answer to the question: nothing deleted (--yes deletes unasked)")
    return approval(answer).approved
