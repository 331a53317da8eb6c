"""Fork points that work: a refused ``--at`` suggests only points that are then accepted."""

from __future__ import annotations

import re

import pytest

from tests.store.conftest import finished_run

SUGGESTED = re.compile(r"fork at (\d+)(?: or (\d+))?$")


def suggestions(error: str) -> list[str]:
    found = SUGGESTED.search(error.strip())
    return [point for point in found.groups() if point] if found else []


@pytest.mark.parametrize("message", [None, "Something else"])
def test_every_suggested_fork_point_is_accepted(roost, message: str | None) -> None:  # type: ignore[no-untyped-def]
    run = finished_run(roost)  # paused, answered, failed, retried, terminated: 21 events
    count = len(roost("export", run).out.splitlines())
    extra = ["--message", message] if message is not None else []
    refused_points, tried = 0, 0
    for at in range(1, count + 1):
        first = roost("fork", run, "--at", str(at), "--no-input", *extra)
        if first.code != 2:
            continue
        refused_points += 1
        points = suggestions(first.err)
        assert points, first.err  # this run has points every option accepts
        for point in points:
            tried += 1
            again = roost("fork", run, "--at", point, "--no-input", *extra)
            assert again.code != 2, f"--at {at} suggested {point}, refused: {again.err}"
    assert refused_points and tried  # the run has points inside steps, and at its end


def test_the_end_of_a_terminated_run_is_never_suggested(roost) -> None:  # type: ignore[no-untyped-def]
    run = finished_run(roost)
    count = len(roost("export", run).out.splitlines())
    # The last step (a model call, its message, the terminate) was written as one.
    inside = roost("fork", run, "--at", str(count - 1))
    assert inside.code == 2
    assert str(count) not in suggestions(inside.err)
    at_end = roost("fork", run, "--at", str(count))
    assert at_end.code == 2
    assert at_end.err.startswith(f"run {run}: by then the run has terminated; fork at ")
