"""How ``roost test`` reports: a line a case, the failures in full, a summary; JUnit XML for CI."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from rich.markup import escape

from roost.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from roost.flowtest.cases import CaseResult
    from roost.flowtest.session import Outcome


def case_line(console: Console, result: CaseResult) -> None:
    """``PASSED path::name (0.01s)``, as each case finishes."""
    mark = "[green]PASSED[/]" if result.passed else "[bold red]FAILED[/]"
    tally = f" {result.tally}" if result.tally else ""
    console.print(f"{mark} {escape(result.node_id)}{tally} [dim]({result.seconds:.2f}s)[/]")


def full_report(console: Console, outcome: Outcome) -> None:
    """The problems of test files that did not load, each failure in full, and the summary."""
    for problems in outcome.invalid.values():
        for problem in problems:
            console.print(escape(str(problem)), style="red")
    if outcome.failed:
        console.print(_rule("FAILURES"))
    for result in outcome.failed:
        console.print(_rule(result.node_id, "_"), style="bold red")
        for failure in result.failures:
            console.print(escape(failure))
        if result.details and result.case.replay is None:
            console.print("[dim]what happened:[/]")
        for line in result.details:
            console.print("  " + escape(line), style=_diff_style(line))
        if result.stored and any(a.stored and not a.passed for a in result.attempts):
            failed = [a.run_id for a in result.attempts if not a.passed and a.stored]
            console.print(f"[dim]roost show {escape(failed[0])}[/] (the run that failed)")
    console.print(_rule(summary(outcome)), style=_summary_style(outcome))


def summary(outcome: Outcome) -> str:
    """``2 passed, 1 failed, 1 invalid test file in 0.31s``."""
    passed = len(outcome.results) - len(outcome.failed)
    parts = [f"{passed} passed"]
    if outcome.failed:
        parts.append(f"{len(outcome.failed)} failed")
    invalid = len(outcome.invalid)
    if invalid:
        parts.append(f"{invalid} invalid test file{'s' if invalid > 1 else ''}")
    return f"{', '.join(parts)} in {outcome.seconds:.2f}s"


def _rule(text: str, fill: str = "=") -> str:
    side = fill * max(3, (76 - len(text)) // 2)
    return f"{side} {escape(text)} {side}"


def _summary_style(outcome: Outcome) -> str:
    return "bold green" if outcome.exit_code == 0 else "bold red"


def _diff_style(line: str) -> str:
    if line.startswith("+") and not line.startswith("+++"):
        return "green"
    if line.startswith("-") and not line.startswith("---"):
        return "red"
    return ""


def write_junit(path: Path, outcome: Outcome) -> None:
    """The outcome as JUnit XML, the format CI systems read: a test suite per test file."""
    root = ET.Element("testsuites", name="roost test", time=f"{outcome.seconds:.3f}")
    suites: dict[str, ET.Element] = {}
    for result in outcome.results:
        file = str(result.file.path)
        suite = suites.get(file)
        if suite is None:
            suite = suites[file] = ET.SubElement(root, "testsuite", name=file)
        case = ET.SubElement(
            suite, "testcase", classname=file, name=result.name, time=f"{result.seconds:.3f}"
        )
        case.set("file", file)
        case.set("line", str(result.case.line))
        if not result.passed:
            failure = ET.SubElement(case, "failure", message=result.failures[0])
            failure.text = "\n".join([*result.failures, *result.details])
        said = [line for line in (result.tally, *result.notes) if line]
        if said:
            ET.SubElement(case, "system-out").text = "\n".join(said)
    for file, problems in outcome.invalid.items():
        lines = [str(problem) for problem in problems]
        suite = ET.SubElement(root, "testsuite", name=file)
        case = ET.SubElement(suite, "testcase", classname=file, name="(test file)")
        ET.SubElement(case, "error", message=lines[0]).text = "\n".join(lines)
    for suite in root:
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    tree = ET.ElementTree(root)
    ET.indent(tree)
    try:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise UsageError(f"--junit-xml {path}: cannot write it: {exc.strerror or exc}") from exc
