"""pytest collects flow test files through the plugin roost declares, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.flowtest.conftest import CASE, write_tests

REPO = Path(__file__).resolve().parents[2]

PYTHON_TEST = "def test_python_tests_still_run():\n    assert 1 + 1 == 2\n"


def installed_like_roost(folder: Path) -> Path:
    """A distribution declaring the pytest11 entry points of pyproject.toml, as an install does."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    info = folder / "roost_entry_points-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: roost-entry-points\nVersion: 0\n")
    lines = [f"{name} = {target}" for name, target in declared["pytest11"].items()]
    (info / "entry_points.txt").write_text("[pytest11]\n" + "\n".join(lines) + "\n")
    return folder


def test_pytest_runs_each_case_beside_python_tests_and_shows_failures_and_bad_files(
    team: Path, tmp_path_factory: object
) -> None:
    failing = CASE.replace("name: solves it", "name: wrong").replace(
        "final: {contains: 4 is right}", "final: {contains: five}"
    )
    write_tests(team, CASE, failing)
    (team / "bad.test.yaml").write_text("flow: team.yaml\ncases: []\n")
    (team / "test_plain.py").write_text(PYTHON_TEST)
    (team / "notes.yaml").write_text("not: a test file\n")  # not collected
    site = installed_like_roost(team / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
         "--continue-on-collection-errors", str(team)],
        cwd=team, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 2 passed, 1 error in" in out.splitlines()[-1]
    assert "PASSED team.test.yaml::solves it" in out
    assert "PASSED test_plain.py::test_python_tests_still_run" in out
    assert "FAILED team.test.yaml::wrong" in out
    assert 'final: expected it to contain "five", got "Checked: 4 is right."' in out
    assert "solver -> desk: It is 4." in out
    assert f"{team}/bad.test.yaml:2:8: error: cases: must have at least 1 item(s)" in out
    assert "Traceback" not in out


def test_pytest_junit_xml_carries_a_repeated_cases_tally_and_its_judges_reasons(
    tmp_path: Path,
) -> None:
    import shutil
    import xml.etree.ElementTree as ET

    shutil.copytree(REPO / "flows" / "support", tmp_path / "support")
    site = installed_like_roost(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--junit-xml", "r.xml",
         "support"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    root = ET.parse(tmp_path / "r.xml").getroot()
    [case] = [c for c in root.iter("testcase") if c.get("name") == "calms an angry customer"]
    properties = [(p.get("name"), p.get("value")) for p in case.iter("property")]
    reason = "The desk apologised, refunded order 42 and never blamed the customer."
    assert properties[0] == ("runs", "3/3 passed")
    assert properties[1] == ("judge", f"run 1: judge (grader): pass: {reason}")
    assert len(properties) == 4
