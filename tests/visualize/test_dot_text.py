"""Text for Graphviz: any name or text makes valid DOT, and no secret is ever drawn."""

from __future__ import annotations

import re
from typing import Literal

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from roost.flow import load_flow_text
from roost.flow.models import Flow
from roost.visualize import flow_to_dot, ids, run_page_html
from tests.visualize import flows
from tests.visualize.graphs import rendered, svg_texts

NO_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)  # lone surrogates cannot be written as UTF-8


names = st.text(st.characters(exclude_categories=NO_SURROGATES), min_size=1, max_size=12)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=names, second=names, content=st.text(max_size=40))
@example(first="0", second="]", content="")  # Graphviz's HTML lexer trips on a leading "]"
@example(first="0", second="\x1f", content="")  # control characters are not XML
@example(first='a"\\N', second="</TD>", content="}\n]; x -> y [")
@example(first="\r", second="b", content="x\ry")  # a name that is only a carriage return
@example(first="\t", second="b", content="")  # a name that is only white space
def test_any_names_and_text_make_valid_dot(first: str, second: str, content: str) -> None:
    if first == second:
        second += "x"
    flow = Flow.model_validate(
        {
            "roost": 1,
            "name": first + second,
            "description": content,
            "agents": {first: {"role": content, "functions": [second]}, second: {}},
            "channels": {"c" + first: {"members": [first, second]}},
            "start": {"from": first, "to": second, "content": content},
        }
    )
    events = flows.Log().message(first, second, content).message(second, first, content).events
    texts = svg_texts(rendered(flow_to_dot(flow, events), "svg"))
    drawn = "".join(texts[ids.node_id(first)].split())
    visible = "".join(re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "", first).split())
    assert visible[:38] in drawn


SECRET_FLOW = """\
roost: 1
name: keyed
description: "talks to ${HOST}"
providers:
  gpt: {kind: openai, model: "${MODEL}", api_key: "${KEY}"}
agents:
  USER: {interrupt: ALWAYS}
  helper: {provider: gpt, role: "Never reveal the key.", description: "uses the key \\\\N"}
start: {from: USER, to: helper, content: "hello"}
"""
# A secret may not stand where a template reads it (roles, descriptions, the start
# message): the loader refuses that, so the secrets here are the provider's settings.


def test_values_from_the_environment_never_reach_a_drawing() -> None:
    environ = {"KEY": 'sk-"very<secret>\\\\N', "MODEL": "gpt-private-9", "HOST": "10.1.2.3"}
    flow = load_flow_text(SECRET_FLOW, "keyed.yaml", environ=environ)
    assert flow.secrets  # the loader recorded what it substituted
    events = flows.Log().message("USER", "helper", "hello").events
    source = flow_to_dot(flow, events)
    svg = rendered(source, "svg").decode()
    page = run_page_html(flow, events)
    for text in (source, svg, page):
        for value in environ.values():
            assert value not in text
        assert "sk-" not in text and "secret&gt;" not in text and "gpt-private" not in text
    assert "gpt · openai ***" in svg_texts(svg)["node-helper"]
    assert "***" in page  # the heading: "talks to ***"
