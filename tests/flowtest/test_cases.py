"""Running a case and judging it: each expectation, answers, vars, replays."""

from __future__ import annotations

import asyncio
import json
import shutil
from typing import TYPE_CHECKING

import pytest

from roost.flowtest.cases import CaseResult, run_case
from roost.flowtest.spec import load_test_file
from tests.flowtest.conftest import CASE, write_tests

if TYPE_CHECKING:
    from pathlib import Path


def results(path: Path) -> list[CaseResult]:
    loaded = load_test_file(path)
    return [asyncio.run(run_case(loaded, case)) for case in loaded.cases]


def test_a_case_that_meets_every_expectation_passes(team: Path) -> None:
    [result] = results(write_tests(team, CASE))
    assert result.failures == []
    assert result.passed


@pytest.mark.parametrize(
    ("expect", "failure"),
    [
        ("status: terminated", "status: expected terminated, got paused"),
        ("at: solver", "at: expected the run to stop at solver, it paused at client"),
        ("final: {equals: It is 4.}", 'final: expected "It is 4.", got "Checked: 4 is right."'),
        ("final: {contains: five}",
         'final: expected it to contain "five", got "Checked: 4 is right."'),
        ("final: {matches: '^4'}", 'final: expected it to match /^4/, got "Checked: 4 is right."'),
        (
            "tool_called: {name: add, arguments: {a: 3}}",
            'tool_called: expected a call of add with {"a": 3}; calls made: add {"a": 2, "b": 2}',
        ),
        (
            "tool_called: {name: add, arguments: {a: 2, b: 5}}",
            'tool_called: expected a call of add with {"a": 2, "b": 5}; '
            'calls made: add {"a": 2, "b": 2}',
        ),
        (
            "tool_called: [{name: add}, {name: mul}]",
            'tool_called: expected a call of mul with {}; calls made: add {"a": 2, "b": 2}',
        ),
        (
            "chosen: [solver, checker]",
            'chosen: expected ["solver", "checker"], got ["solver", "checker", "client"]',
        ),
        (
            "chosen: [solver, client]",
            'chosen: expected ["solver", "client"], got ["solver", "checker", "client"]',
        ),
    ],
)  # fmt: skip
def test_an_expectation_not_met_says_what_was_expected_and_what_happened(
    team: Path, expect: str, failure: str
) -> None:
    case = CASE.split("expect:")[0] + f"expect: {{{expect}}}\n"
    [result] = results(write_tests(team, case))
    assert result.failures == [failure]
    assert "solver -> desk: It is 4." in result.details  # what happened, as a transcript
    assert '  solver calls add {"a": 2, "b": 2}' in result.details


def test_answers_answer_the_interrupts_in_order_then_the_run_stays_paused(team: Path) -> None:
    case = """
        name: answered
        replies:
          team: [It is 4., Checked., Good., TERMINATE]
          director: [solver, checker, client, solver, checker]
        answers: [Thanks!]
        expect: {status: terminated, final: {equals: Good.}}
    """
    [result] = results(write_tests(team, case))
    assert result.failures == []
    [result] = results(write_tests(team, case.replace("answers: [Thanks!]", "answers: []")))
    assert result.failures == [
        "status: expected terminated, got paused",
        'final: expected "Good.", got "Checked."',
    ]


def test_vars_reach_the_templates(team: Path) -> None:
    case = """
        name: persona
        vars: {persona: a terse solver}
        replies: {team: [{echo: system}]}
        expect: {final: {equals: You are a terse solver.}}
    """
    [result] = results(write_tests(team, case))
    assert result.failures == []


def test_a_failed_model_call_is_a_status_to_expect(team: Path) -> None:
    case = """
        name: broken
        replies: {team: [{error: the model is down}]}
        expect: {status: error, at: solver}
    """
    [result] = results(write_tests(team, case))
    assert result.failures == []
    [result] = results(write_tests(team, case.replace("status: error", "status: terminated")))
    assert result.failures == [
        "status: expected terminated, got error (provider 'team': the model is down)"
    ]


def record(folder: Path) -> Path:
    """A recording of the team flow on scripted replies, as `roost run --events` makes it."""
    scripted = (
        (folder / "team.yaml")
        .read_text()
        .replace(
            'team: {kind: openai, model: gpt-4o-mini, api_key: "${ROOST_TEST_UNSET_KEY}"}',
            'team: {kind: scripted, replies: [It is 4., "Checked: 4 is right."]}',
        )
    )
    (folder / "team.yaml").write_text(scripted)
    import roost

    log = roost.JsonlLog(folder / "recorded.jsonl", "recorded")
    roost.run_sync(roost.load_flow(folder / "team.yaml"), log=log)
    log.close()
    return folder / "recorded.jsonl"


def test_a_recording_replays_identical_until_the_flow_changes_what_a_model_is_asked(
    team: Path,
) -> None:
    record(team)
    path = write_tests(team, "name: replays\nreplay: recorded.jsonl")
    [result] = results(path)
    assert result.failures == []

    flow = (team / "team.yaml").read_text()
    (team / "team.yaml").write_text(flow.replace("You check the solver's work.", "You check."))
    [result] = results(path)
    assert result.failures == ["replay: expected identical, diverged at event 2 (of 13 recorded)"]
    removed = [line for line in result.details if line.startswith("-[2]")]
    added = [line for line in result.details if line.startswith("+[2]")]
    assert [line.split(":", 1)[0] for line in removed] == ["-[2] llm_call.request_digest"]
    assert [line.split(":", 1)[0] for line in added] == ["+[2] llm_call.request_digest"]
    assert result.details[:2] == ["--- recorded", "+++ replayed"]


def test_a_missing_recording_fails_its_own_case_only(team: Path) -> None:
    record(team)  # the flow's own provider scripted: the replay case needs no key
    path = write_tests(team, CASE, "name: replays\nreplay: nowhere.jsonl")
    first, second = results(path)
    assert first.passed, first.failures
    assert second.failures == ["replay: no recorded run 'nowhere.jsonl' next to the test file"]


def test_a_recording_that_cannot_be_read_fails_its_case(team: Path) -> None:
    recording = record(team)
    shutil.copy(recording, team / "copy.jsonl")
    lines = (team / "copy.jsonl").read_text().splitlines()
    lines[2] = json.dumps({"seq": 2, "type": "nonsense"})
    (team / "copy.jsonl").write_text("\n".join(lines) + "\n")
    [result] = results(write_tests(team, "name: replays\nreplay: copy.jsonl"))
    assert len(result.failures) == 1
    assert result.failures[0].startswith("replay: cannot replay copy.jsonl: ")
