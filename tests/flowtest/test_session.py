"""``roost test``'s session: which files load, each case run in order, the exit status."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.errors import UsageError
from roost.flowtest.session import collect, run_tests
from tests.flowtest.conftest import CASE, FAILING, write_tests

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flowtest.cases import CaseResult


def test_collect_keeps_the_files_that_load_and_lists_the_others_with_their_problems(
    team: Path,
) -> None:
    write_tests(team, CASE)
    (team / "notes.txt").write_text("not a test")
    (team / "bad.test.yaml").write_text("flow: team.yaml\ncases: {}\n")
    paths = [str(team), str(team / "notes.txt"), str(team / "gone.test.yaml")]
    files, outcome = collect(paths)
    assert [f.path.name for f in files] == ["team.test.yaml"]
    reasons = {name.rsplit("/", 1)[-1]: [p.message for p in problems]
               for name, problems in outcome.invalid.items()}  # fmt: skip
    assert set(reasons) == {"bad.test.yaml", "notes.txt", "gone.test.yaml"}
    assert reasons["notes.txt"] == ["not a test file (its name ends .test.yaml)"]
    assert reasons["gone.test.yaml"] == ["no such file or folder"]
    assert outcome.exit_code == 2


def test_a_folder_without_test_files_is_bad_use(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no test files"):
        collect([str(tmp_path)])


def test_every_case_runs_in_order_and_the_status_says_whether_one_failed(team: Path) -> None:
    write_tests(team, CASE, FAILING)
    seen: list[CaseResult] = []
    outcome = run_tests([str(team)], seen.append)
    assert [r.case.case.name for r in seen] == ["solves it", "wrong"]
    assert [r.passed for r in outcome.results] == [True, False]
    assert outcome.failed == [outcome.results[1]] and outcome.exit_code == 1
    write_tests(team, CASE)
    assert run_tests([str(team)]).exit_code == 0
