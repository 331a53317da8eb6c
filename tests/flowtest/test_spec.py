"""Invalid test files: every problem one located line, the flow's own problems included."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.errors import FlowError
from roost.flowtest.spec import load_test_file
from tests.flowtest.conftest import CASE, cases, results, write_tests
from tests.flowtest.support import ANGRY, FLIPS, JUDGED

if TYPE_CHECKING:
    from pathlib import Path


def problems(path: Path) -> list[str]:
    with pytest.raises(FlowError) as caught:
        load_test_file(path)
    folder = f"{path.parent}/"
    return [str(problem).replace(folder, "") for problem in caught.value.problems]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "1:1: empty file: a flow needs at least 'roost: 1'"),
        ("- a\n", "1:1: a test file is a mapping (flow:, cases:), not a list"),
        ("flow: team.yaml\ncases: [\n",
         "3:1: invalid YAML: did not find expected node content (while parsing a flow node)"),
        ("flow: team.yaml\ncases: []\n", "2:8: cases: must have at least 1 item(s)"),
        ("cases: [{name: a, expect: {status: paused}}]\n",
         "1:1: the test file needs the key 'flow'"),
        ("flow: team.yaml\ncases:\n- {name: a, expect: {status: done}}\n",
         "3:30: cases[0].expect.status: must be one of terminated, paused, error"),
        ("flow: team.yaml\ncases:\n- {name: a, expect: {final: {contain: x}}}\n",
         "3:30: unknown key 'contain' in cases[0].expect.final (did you mean 'contains'?)"),
        ("flow: nowhere.yaml\ncases:\n- {name: a, expect: {status: paused}}\n",
         "1:7: no flow file 'nowhere.yaml' next to the test file"),
    ],
)  # fmt: skip
def test_a_file_the_models_refuse(team: Path, text: str, expected: str) -> None:
    path = team / "t.test.yaml"
    path.write_text(text)
    line, col, message = expected.split(":", 2)
    assert problems(path) == [f"t.test.yaml:{line}:{col}: error:{message}"]


def test_what_only_the_flow_can_say_is_found_in_every_case(team: Path) -> None:
    path = write_tests(
        team,
        "name: a\nvars: {whom: x}\nreplies: {gpt: [hi]}\nexpect: {status: paused}",
        "name: a\nexpect: {}",
        "name: c\nexpect: {final: {equals: a, contains: b}}",
        "name: d\nexpect: {final: {matches: '(('}}",
        "name: e\nreplay: nowhere.jsonl",
        "name: f\nreplay: team.yaml\nanswers: [x]",
    )
    mine = "team.test.yaml"
    assert problems(path) == [
        f"{mine}:4:12: error: the flow has no var 'whom' (its vars: persona)",
        f"{mine}:5:15: error: the flow has no provider 'gpt' (its providers: team, director)",
        f"{mine}:7:11: error: a case named 'a' comes before (case 1)",
        f"{mine}:8:13: error: expect: give at least one of status, at, final, tool_called, chosen, "
        "judge, tools_in_order, max_cost, max_tokens, max_model_calls, "
        "data, route",
        f"{mine}:10:21: error: final: give exactly one of equals, contains, matches",
        f"{mine}:12:31: error: not a regular expression: "
        "missing ), unterminated subpattern at position 1",
        f"{mine}:17:5: error: case 'f': a replay case takes only name and replay, not answers",
        # cases c and d script no reply: they would ask the real provider, whose key is unset
        "team.yaml:6:53: error: environment variable 'ROOST_TEST_UNSET_KEY' is not set "
        "(write ${ROOST_TEST_UNSET_KEY:-default} to give a default)",
    ]


def test_a_case_without_a_start_message_needs_one(team: Path) -> None:
    flow = (team / "team.yaml").read_text()
    (team / "team.yaml").write_text(
        flow.replace('start: {from: client, to: desk, content: "What is 2 + 2?"}\n', "")
    )
    assert problems(write_tests(team, CASE)) == [
        "team.test.yaml:3:5: error: case 'solves it': the flow has no start message; give message:"
    ]


def test_the_flow_s_own_problems_are_located_in_the_flow(team: Path) -> None:
    flow = (team / "team.yaml").read_text()
    (team / "team.yaml").write_text(flow.replace("role: You check the solver's work.", "rol: x"))
    assert problems(write_tests(team, CASE)) == [
        "team.yaml:12:13: error: unknown key 'rol' in agent 'checker' (did you mean 'role'?)"
    ]


def test_a_provider_the_case_does_not_script_needs_its_settings(team: Path) -> None:
    case = CASE.replace("replies:\n  team:", "replies:\n  director: [solver]\n  other:")
    flow = (team / "team.yaml").read_text()
    (team / "team.yaml").write_text(
        flow.replace("\n  director: {kind", "\n  other: {kind: scripted}\n  director: {kind")
    )
    assert problems(write_tests(team, case)) == [
        "team.yaml:6:53: error: environment variable 'ROOST_TEST_UNSET_KEY' is not set "
        "(write ${ROOST_TEST_UNSET_KEY:-default} to give a default)"
    ]


def test_pass_at_above_repeat_is_a_located_error(support: Path) -> None:
    from roost.errors import FlowError

    path = cases(support, FLIPS.replace("pass_at: 2", "pass_at: 5"))
    with pytest.raises(FlowError) as error:
        load_test_file(path)
    assert str(error.value.errors[0]).endswith("error: pass_at 5 is more than repeat 3")


def test_a_judge_of_no_provider_is_located(support: Path) -> None:
    from roost.errors import FlowError

    with pytest.raises(FlowError) as error:
        load_test_file(cases(support, JUDGED))
    assert str(error.value.errors[0]) == (
        f"{support / 'support.test.yaml'}:6:61: error: "
        "no provider 'grader' in the flow or the test file (desk)"
    )


def test_an_unset_variable_of_a_test_files_provider_counts_only_where_a_case_needs_it(
    support: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from roost.errors import FlowError

    monkeypatch.delenv("ROOST_TEST_UNSET_TOKEN", raising=False)
    own = "providers:\n  actor: {kind: scripted, replies: ['${ROOST_TEST_UNSET_TOKEN}']}\n"
    scripted = cases(support, ANGRY)  # the case scripts the actor: no variable is needed
    scripted.write_text(scripted.read_text().replace("cases:\n", own + "cases:\n", 1))
    assert [r.failures for r in results(scripted)] == [[]]
    needed = cases(support, ANGRY.replace("  actor: [This is taking forever!, {echo: last}]\n", ""))
    needed.write_text(needed.read_text().replace("cases:\n", own + "cases:\n", 1))
    with pytest.raises(FlowError) as error:
        load_test_file(needed)
    assert [str(p) for p in error.value.errors] == [
        f"{needed}:3:37: error: environment variable 'ROOST_TEST_UNSET_TOKEN' is not set "
        "(write ${ROOST_TEST_UNSET_TOKEN:-default} to give a default)"
    ]
