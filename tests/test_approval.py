"""A person's answer at a tool approval: ``yes``/``y`` run the call, ``no``/``n`` refuse it,
other text refuses it with that text as the reason (one reading for every front end)."""

from __future__ import annotations

import pytest

from roost.approval import Approval, approval, refusal_text


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
