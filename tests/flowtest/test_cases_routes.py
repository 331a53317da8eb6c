"""Expectations of routed flows: the latest structured reply's ``data`` and the ``route`` taken."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from roost.errors import FlowError
from roost.flowtest.cases import CaseResult, has_subset, run_case
from roost.flowtest.spec import load_test_file
from tests.flowtest.conftest import write_tests

REVIEW = Path(__file__).resolve().parents[2] / "flows" / "review_loop.yaml"

SIGNED = """\
name: signed off
answers: ["Signed off."]
expect:
  data: {verdict: approve}
  route: [critic→writer, critic→editor, owner→TERMINATE]
"""


@pytest.fixture
def review(tmp_path: Path) -> Path:
    shutil.copy(REVIEW, tmp_path / "review_loop.yaml")
    return tmp_path


def results(folder: Path, *cases: str) -> list[CaseResult]:
    path = write_tests(folder, *cases, name="review.test.yaml", flow="review_loop.yaml")
    loaded = load_test_file(path)
    return [asyncio.run(run_case(loaded, case)) for case in loaded.cases]


def test_the_routes_taken_and_the_latest_verdict_pass(review: Path) -> None:
    [result] = results(review, SIGNED)
    assert result.failures == []


def test_a_route_written_with_an_ascii_arrow_is_the_same_route(review: Path) -> None:
    [result] = results(review, SIGNED.replace("→", "->"))
    assert result.failures == []


def test_routes_taken_in_another_order_or_number_fail_naming_both(review: Path) -> None:
    case = SIGNED.replace("[critic→writer, critic→editor, owner→TERMINATE]", "[critic→editor]")
    [result] = results(review, case)
    assert result.failures == [
        "route: expected [critic→editor], got [critic→writer, critic→editor, owner→TERMINATE]"
    ]


def test_the_same_routes_in_another_order_fail(review: Path) -> None:
    case = SIGNED.replace("critic→writer, critic→editor", "critic→editor, critic→writer")
    [result] = results(review, case)
    assert result.failures[0].startswith("route: expected [critic→editor, critic→writer,")


def test_a_plain_successor_chosen_is_no_route(review: Path) -> None:
    # Paused at the owner: the owner's plain route back to the writer was never taken,
    # and the first choice (after the start message) went by a plain name too.
    case = "name: paused\nexpect:\n  route: [critic→writer, critic→editor]\n"
    [result] = results(review, case)
    assert result.failures == []


def test_a_verdict_that_differs_fails_showing_the_reply(review: Path) -> None:
    [result] = results(review, SIGNED.replace("{verdict: approve}", "{verdict: revise}"))
    assert result.failures == [
        'data: expected the latest structured reply to have {"verdict": "revise"}, '
        'got {"notes": "Clear and complete.", "verdict": "approve"}'
    ]


def test_no_structured_reply_at_all_fails_saying_so(review: Path) -> None:
    case = """\
    name: only the writer
    replies: {team: ["Draft.", "not json", "still not json"]}
    expect: {data: {verdict: approve}}
    """
    [result] = results(review, case)
    assert result.failures == [
        'data: expected the latest structured reply to have {"verdict": "approve"}, '
        "got no structured reply"
    ]


def test_data_is_a_subset_nested_mappings_included() -> None:
    data = {"verdict": "approve", "score": {"clarity": 4, "tone": 5}, "tags": ["a", "b"]}
    assert has_subset(data, {"score": {"tone": 5}})
    assert has_subset(data, {"tags": ["a", "b"]})
    assert not has_subset(data, {"tags": ["a"]})  # a list is compared whole
    assert not has_subset(data, {"score": {"tone": 4}})
    assert not has_subset(data, {"missing": None})
    assert not has_subset("approve", {"verdict": "approve"})


@pytest.mark.parametrize(
    ("route", "message"),
    [
        ("critic", "route: write 'critic' as writer→target"),
        ("critic→", "route: write 'critic→' as writer→target"),
        ("critic→nobody", "route: the flow has no agent 'nobody' (its agents: "
         "writer, critic, editor, owner)"),
        ("TERMINATE→writer", "route: the flow has no agent 'TERMINATE' (its agents: "
         "writer, critic, editor, owner)"),
    ],
)  # fmt: skip
def test_a_route_that_names_no_route_is_located(review: Path, route: str, message: str) -> None:
    path = write_tests(
        review,
        f"name: bad\nexpect:\n  route: [critic→writer, {route!r}]\n",
        name="review.test.yaml",
        flow="review_loop.yaml",
    )
    with pytest.raises(FlowError) as error:
        load_test_file(path)
    [problem] = error.value.errors
    assert str(problem) == f"{path}:5:30: error: {message}"


def test_the_docs_show_the_review_loop_tests_as_they_are() -> None:
    root = REVIEW.parents[1]
    page = (root / "docs" / "testing-flows.md").read_text()
    shown = page.split("# flows/review_loop.test.yaml\n", 1)[1].split("```", 1)[0]
    assert shown in (root / "flows" / "review_loop.test.yaml").read_text()
