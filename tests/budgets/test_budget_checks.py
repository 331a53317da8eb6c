"""Validation of budgets: each mistake is one located line naming what is wrong."""

from __future__ import annotations

from roost.flow.models import SwitchTo
from tests.flow.conftest import load, problems

PRICED = "{kind: openai, model: m-x, base_url: 'http://127.0.0.1:9', price: {input: 1, output: 2}}"
UNPRICED = "{kind: openai, model: no-such-model, base_url: 'http://127.0.0.1:9'}"


def flow(budget: str, *, cheap: str = PRICED, agent_budget: str = "") -> str:
    return f"""\
roost: 1
providers:
  main: {PRICED}
  cheap: {cheap}
defaults: {{provider: main}}
budget: {budget}
agents:
  a: {{role: r{", budget: " + agent_budget if agent_budget else ""}}}
  b: {{role: r}}
start: {{from: a, to: b, content: hi}}
"""


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


def test_switch_to_must_name_a_provider():
    (line,) = problems(flow("{model_calls: 2, on_exhausted: {switch_to: chep}}"))
    assert line.startswith("flow.yaml:6:")
    assert "switch_to names no provider: 'chep'" in line and "cheap" in line  # a hint


def test_switch_to_an_unpriced_provider_while_cost_is_limited():
    found = problems(flow("{cost: 1, on_exhausted: {switch_to: cheap}}", cheap=UNPRICED))
    assert any("switch_to provider 'cheap' has no known price" in p for p in found)


def test_switch_to_an_unpriced_provider_is_fine_without_a_cost_limit():
    loaded = load(flow("{model_calls: 3, on_exhausted: {switch_to: cheap}}", cheap=UNPRICED))
    assert loaded.budget is not None


def test_a_cost_limit_names_the_providers_without_a_price():
    (line,) = problems(flow("{cost: 1}", cheap=UNPRICED))
    assert line.startswith("flow.yaml:6:")
    assert "'cheap'" in line and "'main'" not in line and "price:" in line


def test_an_agents_cost_limit_needs_prices_too():
    text = flow("{model_calls: 5}", cheap=UNPRICED, agent_budget="{cost: 0.1}")
    (line,) = problems(text)
    assert line.startswith("flow.yaml:8:") and "'cheap'" in line


def test_a_known_model_and_a_scripted_provider_need_no_price():
    text = flow("{cost: 1}", cheap="{kind: openai, model: gpt-4o-mini, base_url: 'http://x'}")
    text = text.replace("  main:", "  s: {kind: scripted, replies: [hi]}\n  main:")
    assert load(text).budget is not None
