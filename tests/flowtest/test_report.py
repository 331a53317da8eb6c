"""How ``roost test`` reports: a line a case, the failures in full, a summary, JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from tests.flowtest.conftest import CASE, FAILING, cases, roost, write_tests
from tests.flowtest.support import FLIPS

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_a_line_a_case_then_each_failure_in_full_and_exit_1(
    team: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tests(team, CASE, FAILING)
    code, out, _ = roost("test", cwd=team, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("PASSED team.test.yaml::solves it (")
    assert lines[1].startswith("FAILED team.test.yaml::wrong (")
    failure = lines.index('final: expected it to contain "five", got "Checked: 4 is right."')
    assert "team.test.yaml::wrong" in lines[failure - 1]
    assert lines[failure + 1] == "what happened:"
    assert "  solver -> desk: It is 4." in lines
    assert "1 passed, 1 failed in " in lines[-1]


def test_every_case_passing_exits_0_and_junit_xml_lists_them(
    team: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tests(team, CASE)
    write_tests(team, FAILING, name="other.test.yaml")
    code, out, _ = roost(
        "test",
        "team.test.yaml",
        "--junit-xml",
        "report.xml",
        cwd=team,
        capsys=capsys,
        monkeypatch=monkeypatch,
    )
    assert code == 0
    assert "1 passed in " in out.splitlines()[-1]
    code, _, _ = roost(
        "test", ".", "--junit-xml", "report.xml", cwd=team, capsys=capsys, monkeypatch=monkeypatch
    )
    assert code == 1
    root = ET.parse(team / "report.xml").getroot()
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    assert sorted(suites) == ["other.test.yaml", "team.test.yaml"]
    assert (suites["other.test.yaml"].get("tests"), suites["other.test.yaml"].get("failures")) == (
        "1",
        "1",
    )
    [failure] = root.iter("failure")
    assert (
        failure.get("message") == 'final: expected it to contain "five", got "Checked: 4 is right."'
    )
    assert [case.get("name") for case in root.iter("testcase")] == ["wrong", "solves it"]


def test_the_command_prints_the_tally_and_junit_carries_it(
    support: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases(support, FLIPS)
    code, out, _ = roost(
        "test", "--repeat", "2", "--junit-xml", "r.xml", cwd=support, capsys=capsys,
        monkeypatch=monkeypatch,
    )  # fmt: skip
    assert code == 1
    assert out.splitlines()[0].startswith("FAILED support.test.yaml::flips 1/2 passed (")
    assert "1/2 passed, pass_at is 2" in out
    [case] = ET.parse(support / "r.xml").getroot().iter("testcase")
    assert case.findtext("system-out") == "1/2 passed"
    assert (support / ".roost" / "roost.db").is_file()
    assert "(the run that failed)" in out and "roost show " in out
