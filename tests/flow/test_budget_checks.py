"""Validation of budgets: each mistake is one located line naming what is wrong."""

from __future__ import annotations

from tests.flow.conftest import UNPRICED, flow, load, problems


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
