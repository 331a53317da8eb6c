"""A flow whose providers cover every way a model is priced, for the pricing tests."""

from __future__ import annotations

import textwrap

from roost.flow import load_flow_text


def providers_of(yaml_text: str) -> dict[str, object]:
    flow = load_flow_text(textwrap.dedent(yaml_text), "flow.yaml")
    return dict(flow.providers)


FLOW = """\
roost: 1
providers:
  mini: {kind: openai, model: gpt-4o-mini}
  claude: {kind: anthropic, model: claude-3-5-haiku-20241022}
  own: {kind: openai, model: my-local-model, context_window: 4000,
        price: {input: 1, cached_input: 0.5, output: 2}}
  nocache: {kind: openai, model: gpt-4o, price: {input: 3, output: 4}}
  unknown: {kind: openai, model: my-local-model}
agents:
  a: {provider: mini}
"""
