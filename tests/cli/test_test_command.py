"""``roost test`` as a user runs it: which files are read, the exit codes, bad use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.flowtest.conftest import CASE, FAILING, roost, write_tests

REPO = Path(__file__).resolve().parents[2]


def test_an_invalid_test_file_is_located_the_others_still_run_and_exit_2(
    team: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tests(team, CASE)
    (team / "bad.test.yaml").write_text(
        "flow: team.yaml\ncases:\n- {name: a, expect: {status: done}}\n"
    )
    code, out, _ = roost("test", cwd=team, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2
    lines = out.splitlines()
    assert lines[0].startswith("PASSED team.test.yaml::solves it")
    status = "cases[0].expect.status: must be one of terminated, paused, error"
    assert f"bad.test.yaml:3:30: error: {status}" in lines
    assert "1 passed, 1 invalid test file in " in lines[-1]


def test_an_invalid_test_file_beside_a_failing_case_exits_2_not_1(
    team: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 1 would say every test file was read; one was not, and that is told first."""
    write_tests(team, FAILING)
    (team / "bad.test.yaml").write_text("flow: team.yaml\ncases: {}\n")
    code, out, _ = roost("test", cwd=team, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2
    lines = out.splitlines()
    assert lines[0].startswith("FAILED team.test.yaml::wrong")
    assert any(line.startswith("bad.test.yaml:2:") for line in lines), out
    assert "0 passed, 1 failed, 1 invalid test file in " in lines[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "no test files (*.test.yaml) in ."),
        (("team.yaml",), "team.yaml:1:1: error: not a test file (its name ends .test.yaml)"),
        (("none.test.yaml",), "none.test.yaml:1:1: error: no such file or folder"),
        (("--junit-xml", "no/such/folder/r.xml", "team.test.yaml"),
         "--junit-xml no/such/folder/r.xml: cannot write it: No such file or directory"),
    ],
)  # fmt: skip
def test_bad_use_is_one_line_and_exit_2(
    team: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    message: str,
) -> None:
    if "--junit-xml" in args:
        write_tests(team, CASE)
    code, out, err = roost("test", *args, cwd=team, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2
    assert message in (out + err).splitlines()


def test_the_example_flows_pass_their_tests(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ROOST_DB", str(tmp_path / "runs.db"))  # the case runs, not the repo's
    code, out, _ = roost("test", "flows", cwd=REPO, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0, out
    assert "FAILED" not in out
    assert out.count("PASSED flows/") == 17
    assert "PASSED flows/support/support.test.yaml::calms an angry customer 3/3 passed (" in out
