"""Cases with no single right text: repeats, trajectories and limits, judges, simulated people."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest

from roost.api import replay
from roost.flowtest.cases import CaseResult, run_case
from roost.flowtest.spec import load_test_file
from roost.store.sql import SqlStore
from tests.flowtest.conftest import roost, write_tests
from tests.flowtest.support import support_folder

if TYPE_CHECKING:
    from pathlib import Path

FLIPS = """\
name: flips
repeat: 3
pass_at: 2
replies:
  desk:
    - {tool_calls: [{name: flip}]}
    - {echo: last}
expect:
  final: {equals: "yes"}
"""


@pytest.fixture
def support(tmp_path: Path) -> Path:
    return support_folder(tmp_path)


def results(
    path: Path, store: SqlStore | None = None, repeat: int | None = None
) -> list[CaseResult]:
    loaded = load_test_file(path)
    return [
        asyncio.run(run_case(loaded, case, store=store, repeat=repeat)) for case in loaded.cases
    ]


def cases(folder: Path, *written: str) -> Path:
    return write_tests(folder, *written, name="support.test.yaml", flow="support.yaml")


# ------------------------------------------------------------------------------ repeats


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


def test_pass_at_above_repeat_is_a_located_error(support: Path) -> None:
    from roost.errors import FlowError

    path = cases(support, FLIPS.replace("pass_at: 2", "pass_at: 5"))
    with pytest.raises(FlowError) as error:
        load_test_file(path)
    assert str(error.value.errors[0]).endswith("error: pass_at 5 is more than repeat 3")


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

GRADER = "providers:\n  grader: {kind: scripted, replies: [%s]}\n"
JUDGED = """\
name: judged
replies: {desk: [Your order 42 is on its way.]}
expect:
  judge: {rubric: "Says where the order is.", provider: grader}
"""


def judged_file(folder: Path, *verdicts: str, case: str = JUDGED) -> Path:
    path = cases(folder, case)
    replies = ", ".join(f"'{v}'" for v in verdicts)
    path.write_text(path.read_text().replace("cases:\n", GRADER % replies + "cases:\n", 1))
    return path


def test_a_judge_that_passes_passes_and_its_call_is_recorded_and_replays(
    support: Path, tmp_path: Path
) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(
        judged_file(support, '{"pass": true, "reason": "It names the order."}'), store
    )
    assert result.failures == []
    assert result.notes == ["judge (grader): pass: It names the order."]
    log = store.log(result.attempts[0].run_id)
    [call] = [e for e in log.load() if e.type == "llm_call" and e.purpose == "judge"]
    assert (call.provider, call.node, call.response.text) == (
        "grader", "judge", '{"pass": true, "reason": "It names the order."}'
    )  # fmt: skip
    assert asyncio.run(replay(log)).identical
    store.close()


def test_a_judge_that_fails_says_why_and_a_reply_that_is_no_verdict_fails(support: Path) -> None:
    [failed] = results(judged_file(support, '{"pass": false, "reason": "No order named."}'))
    assert failed.failures == ["judge (grader): fail: No order named."]
    assert "support -> customer: Your order 42 is on its way." in failed.details
    [garbled] = results(judged_file(support, '{"pass": "yes"}'))
    assert garbled.failures == [
        "judge (grader): fail: its reply is not a verdict ('reason' is a required property): "
        '\'{"pass": "yes"}\''
    ]


def test_every_judge_of_a_list_must_pass(support: Path) -> None:
    two = JUDGED.replace(
        'judge: {rubric: "Says where the order is.", provider: grader}',
        "judge:\n    - {rubric: Polite., provider: grader}"
        "\n    - {rubric: Short., provider: grader}",
    )
    [result] = results(
        judged_file(
            support, '{"pass": true, "reason": "ok"}', '{"pass": false, "reason": "too long"}',
            case=two,
        )
    )  # fmt: skip
    assert result.failures == ["judge (grader): fail: too long"]


def test_a_judge_of_no_provider_is_located(support: Path) -> None:
    from roost.errors import FlowError

    with pytest.raises(FlowError) as error:
        load_test_file(cases(support, JUDGED))
    assert str(error.value.errors[0]) == (
        f"{support / 'support.test.yaml'}:6:61: error: "
        "no provider 'grader' in the flow or the test file (desk)"
    )


# ------------------------------------------------------------------------ simulated people

ANGRY = """\
name: angry
user:
  role: You are an annoyed customer whose order 42 is late.
  provider: actor
  max_turns: 2
replies:
  desk: [Let me look., It ships today., Anything else?]
  actor: [This is taking forever!, {echo: last}]
expect:
  status: paused
  final: {equals: Anything else?}
"""
ACTOR = "providers:\n  actor: {kind: scripted, replies: [Hi]}\n"


def with_actor(path: Path) -> Path:
    path.write_text(path.read_text().replace("cases:\n", ACTOR + "cases:\n", 1))
    return path


def test_a_simulated_person_answers_each_turn_from_its_side_and_its_run_replays(
    support: Path, tmp_path: Path
) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(with_actor(cases(support, ANGRY)), store)
    assert result.failures == []
    log = store.log(result.attempts[0].run_id)
    events = log.load()
    said = [(e.from_, e.content) for e in events if e.type == "message"]
    assert said == [
        ("customer", "Where is my order 42?"),
        ("support", "Let me look."),
        ("customer", "This is taking forever!"),
        ("support", "It ships today."),
        ("customer", "It ships today."),  # {echo: last}: the last thing it was told
        ("support", "Anything else?"),
    ]
    calls = [e for e in events if e.type == "llm_call" and e.purpose == "simulated_person"]
    assert [(c.node, c.provider) for c in calls] == [("customer", "actor")] * 2
    assert asyncio.run(replay(log)).identical
    store.close()


def test_the_person_sees_its_own_words_as_its_turns_and_its_role_as_the_system() -> None:
    from roost.events import MessageEvent
    from roost.flowtest.person import OPENING, person_request
    from roost.flowtest.spec import User

    def said(seq: int, frm: str, to: str, text: str) -> MessageEvent:
        return MessageEvent(seq=seq, run="r", ts="t", from_=frm, to=to, content=text)

    user = User(role="You are cross.", provider="actor")
    events = [said(1, "customer", "support", "Hi"), said(2, "support", "customer", "Hello")]
    request = person_request(user, "customer", events)
    assert request.system.startswith("You are cross.\n\n")
    assert [(type(m).__name__, m.content) for m in request.messages] == [
        ("UserMessage", OPENING), ("AssistantMessage", "Hi"), ("UserMessage", "Hello"),
    ]  # fmt: skip


def test_approvals_answer_tool_approvals_and_the_person_the_rest(support: Path) -> None:
    flow = (support / "support.yaml").read_text()
    (support / "support.yaml").write_text(
        flow.replace("refund: {python:", "refund: {approval: always, python:")
    )
    refund = "{tool_calls: [{name: refund, arguments: {number: 42}}]}"
    case = (
        ANGRY.replace("[Let me look., It ships today.,", f"[{refund}, Refunded.,")
        .replace("user:\n", 'approvals: ["yes"]\nuser:\n')
        .replace("max_turns: 2", "max_turns: 1")
    )
    [result] = results(with_actor(cases(support, case)))
    assert result.failures == []
    without = case.replace('approvals: ["yes"]\n', "")  # the approval waits: no answers
    [waiting] = results(with_actor(cases(support, without)))
    assert waiting.failures == ['final: expected "Anything else?", got "Where is my order 42?"']


def test_the_docs_show_the_support_tests_as_they_are() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "testing-flows.md").read_text()
    shown = page.split("# flows/support/support.test.yaml\n", 1)[1].split("```", 1)[0]
    assert shown in (root / "flows" / "support" / "support.test.yaml").read_text()


def test_a_simulated_person_whose_provider_fails_fails_the_case_in_one_line(
    support: Path,
) -> None:
    broken = ANGRY.replace(
        "actor: [This is taking forever!, {echo: last}]", "actor: [{error: down}]"
    )
    [result] = results(with_actor(cases(support, broken)))
    assert result.failures == ["user: provider 'actor': down"]


SECRET = "sk-roost-test-4d1e9"


def test_a_test_files_own_provider_reads_the_environment_and_masks_what_it_read(
    support: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOST_TEST_ACTOR_TOKEN", SECRET)
    path = cases(support, ANGRY.replace("  actor: [This is taking forever!, {echo: last}]\n", ""))
    refused = '[{error: "refused ${ROOST_TEST_ACTOR_TOKEN}"}]'
    own = f"providers:\n  actor: {{kind: scripted, replies: {refused}}}\n"
    path.write_text(path.read_text().replace("cases:\n", own + "cases:\n", 1))
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(path, store)
    assert result.failures == ["user: provider 'actor': refused ***"]
    [call] = [e for e in store.log(result.attempts[0].run_id).load() if e.type == "llm_call"
              and e.purpose == "simulated_person"]  # fmt: skip
    assert call.error == "provider 'actor': refused ***"
    store.close()


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
