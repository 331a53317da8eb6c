"""Helpers shared by the flow tests."""

from __future__ import annotations

import textwrap

import pytest

from roost.errors import FlowError
from roost.flow import Flow, load_flow_text

# The smallest flow that runs: one person, one scripted agent.
MINIMAL = """\
roost: 1
name: hello
providers:
  mock: {kind: scripted, replies: [Hi]}
agents:
  USER: {interrupt: ALWAYS}
  bot:
    provider: mock
    role: You greet people.
start: {from: USER, to: bot, content: hello}
"""


def load(text: str, **environ: str) -> Flow:
    """Loads dedented ``text`` as ``flow.yaml`` with exactly ``environ`` as the environment."""
    return load_flow_text(textwrap.dedent(text), "flow.yaml", environ=environ)


def problems(text: str, **environ: str) -> list[str]:
    """The problem lines of a flow that must fail."""
    with pytest.raises(FlowError) as caught:
        load(text, **environ)
    return [str(p) for p in caught.value.problems]


# Budgets: a priced provider, one whose price is unknown, and a flow with a budget.
PRICED = "{kind: openai, model: m-x, base_url: 'http://127.0.0.1:9', price: {input: 1, output: 2}}"
UNPRICED = "{kind: openai, model: no-such-model, base_url: 'http://127.0.0.1:9'}"


def flow(budget: str, *, cheap: str = PRICED, agent_budget: str = "") -> str:
    """A flow whose run has ``budget`` (and agent a ``agent_budget``), its provider priced."""
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
