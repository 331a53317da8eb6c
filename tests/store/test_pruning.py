"""Which runs go together when a run is archived or deleted, and what a prune deletes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from roost.store.pruning import archive, family, is_subflow_run, parts, prune_plan
from roost.store.sql import SqlStore
from tests.store.conftest import run_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

LATER = datetime(2999, 1, 1, tzinfo=UTC)  # every run here was last active before it


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlStore]:
    """A parent run, its fork ``child`` and the child's fork ``grandchild``."""
    store = SqlStore(str(tmp_path / "runs.db"))
    store.new_log("parent").append(run_events("parent", 4))
    store.fork("parent", 2, "child").materialize()
    store.fork("child", 1, "grandchild").materialize()
    yield store
    store.close()


def test_a_runs_family_is_every_run_that_branches_off_it_but_its_parts_leave_forks_out(
    store: SqlStore,
) -> None:
    assert [run.id for run in family(store, "parent")] == ["parent", "child", "grandchild"]
    assert [run.id for run in family(store, "child")] == ["child", "grandchild"]
    assert parts(store, "parent") == ["parent"]  # a fork is a conversation of its own
    assert not is_subflow_run(store.run("child"))
    assert not is_subflow_run(store.run("parent"))


def test_archiving_a_run_leaves_its_forks_as_they_were_and_can_be_undone(
    store: SqlStore,
) -> None:
    assert archive(store, "parent") == ["parent"]
    assert store.run("parent").archived is not None
    assert store.run("child").archived is None
    assert archive(store, "parent", archived=False) == ["parent"]
    assert store.run("parent").archived is None


def test_a_prune_keeps_an_old_archived_run_that_a_staying_fork_branches_off(
    store: SqlStore,
) -> None:
    assert prune_plan(store, LATER).delete == []  # nothing archived
    archive(store, "parent")
    plan = prune_plan(store, LATER)
    assert plan.delete == []
    assert [(kept.run.id, kept.because.id) for kept in plan.kept] == [("parent", "child")]
    archive(store, "child")
    archive(store, "grandchild")
    assert {run.id for run in prune_plan(store, LATER).delete} == {"parent", "child", "grandchild"}
    assert prune_plan(store, datetime(2000, 1, 1, tzinfo=UTC)).delete == []  # none that old
    assert prune_plan(store, LATER, flow="another").delete == []
    # Of its flow's archived runs, a chosen run takes its old archived descendants along.
    assert len(prune_plan(store, LATER, flow="f").delete) == 3
