"""An agent's and a run's budget: its limits, its action once spent, and what it refuses."""

from __future__ import annotations

from roost.flow.models import SwitchTo
from tests.flow.conftest import flow, load, problems


def test_a_budget_with_every_key_loads():
    limits = "{cost: 1, tokens: 9, model_calls: 3, tool_calls: 2, seconds: 60, "
    own = "{model_calls: 1, on_exhausted: ask}"
    loaded = load(flow(limits + "on_exhausted: {switch_to: cheap}}", agent_budget=own))
    assert loaded.budget is not None
    assert loaded.budget.limits() == {
        "cost": 1.0, "tokens": 9.0, "model_calls": 3.0, "tool_calls": 2.0, "seconds": 60.0
    }  # fmt: skip
    assert loaded.budget.on_exhausted == SwitchTo(switch_to="cheap")
    assert loaded.agents["a"].budget is not None
    assert loaded.agents["a"].budget.on_exhausted == "ask"


def test_zero_and_negative_limits_are_located():
    found = problems(flow("{cost: 0, tokens: -5}"))
    assert found == [
        "flow.yaml:6:16: error: budget.cost: must be greater than 0.0",
        "flow.yaml:6:27: error: budget.tokens: must be greater than 0",
    ]


def test_an_unknown_key_is_named():
    assert problems(flow("{cost: 1, dollars: 2}")) == [
        "flow.yaml:6:19: error: unknown key 'dollars' in budget"
    ]


def test_an_unknown_action_is_refused():
    assert problems(flow("{model_calls: 2, on_exhausted: pause}")) == [
        "flow.yaml:6:40: error: budget.on_exhausted: write stop, ask or {switch_to: PROVIDER}"
    ]
