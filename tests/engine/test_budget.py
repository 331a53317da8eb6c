"""The budget keeper's own rules: a new limit a person gives, and whether a run has a budget
(``tests/budgets/`` runs whole flows against its limits)."""

from __future__ import annotations

import pytest

from roost.engine.budget import has_budget, parse_limit
from roost.errors import UsageError
from roost.runstate import RunState
from tests.engine.conftest import make_flow

PAIR = """
roost: 1
name: budgeted
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [a]}
agents:
  a: {role: r}
  b: {role: r}
start: {from: a, to: b, content: hi}
"""


def test_a_new_limit_is_a_positive_number_above_what_was_spent() -> None:
    assert parse_limit("0.75", "cost") == 0.75
    assert parse_limit(" $2 ", "cost", spent=1.5) == 2.0
    for bad in ("", "lots", "nan", "inf", "0", "-1"):
        with pytest.raises(UsageError, match="answer with a positive number"):
            parse_limit(bad, "cost")
    with pytest.raises(UsageError, match=r"limit of 1\.5 is not above the 1\.5 spent"):
        parse_limit("1.5", "cost", spent=1.5)


def test_a_run_has_a_budget_from_its_flow_an_agent_or_a_limit_set_outside() -> None:
    assert not has_budget(make_flow(PAIR), RunState())
    flows = PAIR.replace("start:", "budget: {model_calls: 3}\nstart:")
    agents = PAIR.replace("b: {role: r}", "b: {role: r, budget: {model_calls: 1}}")
    assert has_budget(make_flow(flows), RunState())
    assert has_budget(make_flow(agents), RunState())
    raised = RunState()
    raised.raised[(None, "cost")] = 1.0
    assert has_budget(make_flow(PAIR), raised)
