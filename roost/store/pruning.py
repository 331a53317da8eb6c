"""Archiving runs and deleting them: which runs go together, and what a prune deletes.

A run is archived with its sub-flow runs (the child runs its ``flow:`` tools
started, which are part of it), never with its forks, which are conversations
of their own. A run is deleted with every run that branches off it, at any
depth: a fork reads its first events from its parent's rows, so a fork never
outlives its parent. A prune deletes only archived runs whose last event is
older than its date, and keeps any of them that a run staying behind branches
off (a fork still in use keeps its parent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roost.store.schema import RunInfo
    from roost.store.sql import SqlStore


def family(store: SqlStore, run_id: str) -> list[RunInfo]:
    """The run and every run that branches off it (forks and sub-flow runs), at any depth."""
    found = [store.run(run_id)]
    level = [run_id]
    seen = {run_id}
    while level:
        children = [child for child in store.children_of(level) if child.id not in seen]
        seen.update(child.id for child in children)
        found += children
        level = [child.id for child in children]
    return found


def parts(store: SqlStore, run_id: str) -> list[str]:
    """The run and its sub-flow runs, at any depth: what archiving the run archives."""
    found = [run_id]
    level = [run_id]
    while level:
        children = [child.id for child in store.children_of(level) if is_subflow_run(child)]
        children = [child for child in children if child not in found]
        found += children
        level = children
    return found


def is_subflow_run(run: RunInfo) -> bool:
    """Whether ``run`` is a child run a ``flow:`` tool started (a fork has a fork point)."""
    return run.parent is not None and run.fork_at is None


@dataclass(frozen=True, slots=True)
class Kept:
    """An archived run old enough to go that stays, because ``because`` branches off it."""

    run: RunInfo
    because: RunInfo


@dataclass(slots=True)
class Prune:
    """What a prune deletes, and the runs it would have deleted but keeps."""

    delete: list[RunInfo] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)


def prune_plan(store: SqlStore, before: datetime, *, flow: str | None = None) -> Prune:
    """The archived runs last active before ``before`` (of ``flow``, with the runs that
    branch off them) that can be deleted without leaving a fork behind."""
    old = {run.id: run for run in store.runs(archived=True) if _last_active(run) < before}
    chosen = {key: run for key, run in old.items() if flow is None or run.flow_name == flow}
    level = list(chosen)
    while level:  # a chosen run's old archived descendants go with it, whatever their flow
        children = [c for c in store.children_of(level) if c.id in old and c.id not in chosen]
        chosen.update((child.id, child) for child in children)
        level = [child.id for child in children]
    plan = Prune()
    children_of = _children(store, list(chosen))
    while True:  # drop the runs that something staying branches off, until none is left
        blocked = {
            run_id: next(c for c in children_of.get(run_id, []) if c.id not in chosen)
            for run_id in chosen
            if any(c.id not in chosen for c in children_of.get(run_id, []))
        }
        if not blocked:
            break
        for run_id, child in blocked.items():
            plan.kept.append(Kept(chosen.pop(run_id), child))
    plan.delete = sorted(chosen.values(), key=lambda run: (run.created, run.id), reverse=True)
    return plan


def _children(store: SqlStore, run_ids: list[str]) -> dict[str, list[RunInfo]]:
    found: dict[str, list[RunInfo]] = {}
    for child in store.children_of(run_ids):
        assert child.parent is not None  # children_of finds runs by their parent
        found.setdefault(child.parent, []).append(child)
    return found


def _last_active(run: RunInfo) -> datetime:
    """When the run's last event was written; a time that does not parse is the latest."""
    try:
        when = datetime.fromisoformat(run.updated.replace("Z", "+00:00"))
    except ValueError:
        return datetime.max.replace(tzinfo=UTC)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def archive(store: SqlStore, run_id: str, *, archived: bool = True) -> list[str]:
    """Archives the run and its sub-flow runs (or takes them out of the archive); their ids."""
    from roost.events import now_iso

    ids = parts(store, run_id)
    store.set_archived(ids, now_iso() if archived else None)
    return ids
