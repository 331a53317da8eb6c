"""``roost runs``: the stored runs a listing shows, a row each, and the filters it takes."""

from __future__ import annotations

from tests.store.conftest import finished_run


def test_runs_lists_stored_runs(roost) -> None:  # type: ignore[no-untyped-def]
    assert roost("runs").out.strip() == "no runs stored"
    run_id = finished_run(roost)
    listed = roost("runs")
    assert run_id in listed.out and "terminated" in listed.out
    row = next(line for line in listed.out.splitlines() if run_id in line).split()
    assert row[1:6] == ["chat", "terminated", "8", "0", "$0.00"]  # no usage: no cost
    assert run_id not in roost("runs", "--status", "paused").out
    assert run_id in roost("runs", "--flow", "chat").out
    bad = roost("runs", "--status", "sleeping")
    assert bad.code == 2 and "--status 'sleeping'" in bad.err
