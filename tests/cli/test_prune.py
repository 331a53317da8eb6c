"""``roost runs --prune DATE``: the archived runs last active before DATE deleted, after asking."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, text

from roost.store.urls import resolve_url
from tests.fakes.chat_sessions import ASK, Roost, command_line, listed, run_id_in

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def roost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """The command line in a fresh folder holding ask.yaml (tests/fakes/chat_sessions.py)."""
    return command_line(tmp_path, monkeypatch, capsys)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def last_active(db: str, run_id: str, when: str) -> None:
    """Sets when the run was last active, as if its last step had been then."""
    engine = create_engine(resolve_url(db))
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE runs SET updated = :when WHERE id = :id"), {"when": when, "id": run_id}
        )
    engine.dispose()


def test_prune_deletes_old_archived_runs_after_asking(roost: Roost, db: str) -> None:
    ids = [
        run_id_in(roost("chat", "ask.yaml", "--new", "--db", db, stdin="hi\n").out)
        for _ in range(4)
    ]
    old, recent, kept_out, fork_parent = ids
    forked = roost("fork", fork_parent, "--at", "5", "--no-input", "--db", db)
    fork_id = forked.out.split()[1].rstrip(":")
    for run_id in (old, recent, fork_parent):
        roost("chat", "ask.yaml", "--db", db, stdin=f"/switch {run_id}\n/archive\n")
    for run_id in (old, kept_out, fork_parent):
        last_active(db, run_id, "2026-01-01T00:00:00.000001Z")

    asked = roost("runs", "--prune", "2026-06-01", "--db", db, stdin="n\n")
    assert asked.code == 0 and "nothing deleted" in asked.out
    assert f"  {old}  ask  paused, 2 messages, last active 2026-01-01" in asked.out
    assert recent not in asked.out and kept_out not in asked.out  # recent; not archived
    assert f"kept {fork_parent}: run {fork_id} branches off it and stays" in asked.out
    assert "delete 1 run and their events? This cannot be undone. [y/N]" in asked.err
    assert old in listed(roost, "--all", "--db", db)

    silent = roost("runs", "--prune", "2026-06-01", "--db", db, stdin="")
    assert silent.code == 2 and "no answer to the question: nothing deleted" in silent.err

    done = roost("runs", "--prune", "2026-06-01", "--db", db, stdin="y\n")
    assert done.code == 0 and "deleted 1 run (" in done.out
    left = listed(roost, "--all", "--db", db)
    assert old not in left and {recent, kept_out, fork_parent, fork_id} <= set(left)
    assert roost("export", fork_id, "--db", db).code == 0  # the fork still reads its parent

    roost("chat", "ask.yaml", "--db", db, stdin=f"/switch {fork_id}\n/archive\n")
    last_active(db, fork_id, "2026-01-01T00:00:00Z")
    both = roost("runs", "--prune", "2026-06-01", "--yes", "--db", db)
    assert both.code == 0 and "deleted 2 runs (" in both.out and "[y/N]" not in both.err
    assert set(listed(roost, "--all", "--db", db)) == {recent, kept_out}


def test_prune_takes_days_one_flow_and_refuses_what_is_no_date(
    roost: Roost, tmp_path: Path
) -> None:
    run_id = run_id_in(roost("chat", "ask.yaml", stdin="hi\n/archive\n").out)
    (tmp_path / "other.yaml").write_text(ASK.replace("name: ask", "name: other"))
    other = run_id_in(roost("chat", "other.yaml", stdin="hi\n/archive\n").out)
    nothing = roost("runs", "--prune", "30d")
    assert "no archived run was last active before" in nothing.out and nothing.code == 0
    one_flow = roost("runs", "--prune", "2999-01-01", "--flow", "other", "--yes")
    assert f"  {other}  other" in one_flow.out and run_id not in one_flow.out
    assert listed(roost, "--all") == [run_id]
    everything = roost("runs", "--prune", "2999-01-01", "--yes")
    assert f"  {run_id}  ask" in everything.out and "deleted 1 run" in everything.out
    bad = roost("runs", "--prune", "last week")
    assert bad.code == 2 and bad.err.count("\n") == 1
    assert "--prune 'last week': give a date (2026-11-01)" in bad.err
    alone = roost("runs", "--yes")
    assert alone.code == 2 and "--yes answers --prune's question" in alone.err
    mixed = roost("runs", "--prune", "30d", "--status", "paused")
    assert mixed.code == 2 and "--prune takes --flow, --yes and --db, not --status" in mixed.err
