"""A person's answer at a tool approval: ``yes``/``y`` run the call, ``no``/``n`` refuse it,
other text refuses it with that text as the reason (one reading for every front end)."""

from __future__ import annotations

import pytest

import roost
from roost.approval import Approval, approval, refusal_text
from roost.testing import call, flow_from_yaml

MEAN = """
    roost: 1
    tools:
      mean: {python: "statistics:fmean", description: The mean., approval: always}
    agents:
      USER: {role: A person with numbers., interrupt: ALWAYS}
      helper: {role: You answer with your tools., functions: [mean]}
    start: {from: USER, to: helper, content: "The mean of 2, 4 and 9?"}
"""


@pytest.mark.parametrize("answer", ["yes", "y", "Y", "YES", " Yes ", "y\n"])
def test_yes_and_y_in_any_case_approve(answer: str) -> None:
    assert approval(answer) == Approval(True, "")


@pytest.mark.parametrize("answer", ["no", "n", "N", " NO ", ""])
def test_no_and_n_refuse_without_a_reason(answer: str) -> None:
    assert approval(answer) == Approval(False, "")
    assert refusal_text(answer) == "The person did not approve this call."


@pytest.mark.parametrize("answer", ["yes please", "nope", "not on a Sunday", "yy"])
def test_other_text_refuses_with_it_as_the_reason(answer: str) -> None:
    assert approval(answer) == Approval(False, answer)
    assert refusal_text(f" {answer} ", "plan") == f"The person did not approve this plan: {answer}"


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ("y", ("5.0", False)),
        ("Yes", ("5.0", False)),
        ("n", ("The person did not approve this call.", True)),
        ("later, please", ("The person did not approve this call: later, please", True)),
    ],
)
async def test_a_run_reads_the_answer_the_same_way(answer: str, result: tuple[str, bool]) -> None:
    replies = [call("mean", data=[2, 4, 9]), "Done.", "TERMINATE"]
    flow = flow_from_yaml(MEAN, replies=replies)
    log = roost.MemoryLog("approval")
    await roost.run(flow, answer=lambda state: answer, log=log)
    results = [(e.content, e.is_error) for e in log.load() if e.type == "tool_result"]
    assert results == [result]
