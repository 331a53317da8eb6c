"""Cases with no single right text: repeats and pass_at, trajectories and limits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.store.sql import SqlStore
from tests.flowtest.conftest import cases, results
from tests.flowtest.support import FLIPS

if TYPE_CHECKING:
    from pathlib import Path


def test_a_repeated_case_passes_at_pass_at_and_each_run_is_stored(
    support: Path, tmp_path: Path
) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(cases(support, FLIPS), store)
    assert (result.passed, result.tally) == (True, "2/3 passed")
    ids = [attempt.run_id for attempt in result.attempts]
    assert len(set(ids)) == 3
    assert [store.run(i).title for i in ids] == [
        f"test support.test.yaml::flips (run {n})" for n in (1, 2, 3)
    ]
    store.close()


def test_below_pass_at_fails_naming_each_failed_run(support: Path) -> None:
    [result] = results(cases(support, FLIPS.replace("pass_at: 2", "pass_at: 3")))
    assert not result.passed
    assert result.failures[0] == "2/3 passed, pass_at is 3"
    run = result.attempts[1].run_id
    assert result.failures[1:] == [f'run 2 ({run}): final: expected "yes", got "no"']


def test_repeat_given_from_outside_runs_every_case_that_often_all_must_pass(support: Path) -> None:
    single = FLIPS.replace("repeat: 3\npass_at: 2\n", "")
    [result] = results(cases(support, single), repeat=4)
    assert (result.passed, result.tally) == (False, "2/4 passed")


# ------------------------------------------------------------------ trajectories and limits

TOOLS = """\
name: tools
replies:
  desk:
    - {tool_calls: [{name: lookup_order, arguments: {number: 42}}]}
    - {tool_calls: [{name: flip}]}
    - {tool_calls: [{name: refund, arguments: {number: 42}}]}
    - Refunded.
expect:
  tools_in_order: [lookup_order, refund]
"""


def test_tools_in_order_is_a_subsequence_of_the_calls(support: Path) -> None:
    wrong = TOOLS.replace("name: tools", "name: wrong").replace(
        "[lookup_order, refund]", "[refund, lookup_order]"
    )
    passed, failed = results(cases(support, TOOLS, wrong))
    assert passed.failures == []
    assert failed.failures == [
        "tools_in_order: expected calls of refund, lookup_order in this order; "
        "calls made: lookup_order, flip, refund"
    ]


def test_limits_of_tokens_cost_and_calls_are_read_from_the_runs_usage(support: Path) -> None:
    from fakes.llm_server import FakeLLMServer
    from fakes.script import Reply

    with FakeLLMServer() as fake:
        flow = (support / "support.yaml").read_text()
        (support / "support.yaml").write_text(
            flow.replace(
                'desk: {kind: scripted, replies: ["Hello"], when_exhausted: repeat_last}',
                f"desk: {{kind: openai, model: gpt-4o-mini, base_url: '{fake.url}/v1', "
                "api_key: sk-test, max_retries: 0}",
            )
        )
        fake.script(Reply("Hello"), Reply("Hello"))
        within = "name: within\nexpect: {max_tokens: 19, max_model_calls: 1, max_cost: 0.001}\n"
        over = "name: over\nexpect: {max_tokens: 18, max_model_calls: 0, max_cost: 0.000001}\n"
        ok, bad = results(cases(support, within, over))
    assert ok.failures == []
    assert bad.failures == [
        "max_model_calls: expected at most 0, made 1; max_tokens: expected at most 18, used 19; "
        "max_cost: expected at most $1e-06, spent $6e-06 (estimated)"
    ]


# ------------------------------------------------------------------------------ judges


# ------------------------------------------------------------------------ simulated people


def test_the_docs_show_the_support_tests_as_they_are() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "testing-flows.md").read_text()
    shown = page.split("# flows/support/support.test.yaml\n", 1)[1].split("```", 1)[0]
    assert shown in (root / "flows" / "support" / "support.test.yaml").read_text()
