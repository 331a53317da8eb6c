"""The nodes of a drawing: how each kind of agent looks, its small print, a run's ghosts."""

from __future__ import annotations

from roost.events import RunStartEvent
from roost.visualize import flow_to_dot, ids
from tests.visualize import flows
from tests.visualize.flows import WRITER
from tests.visualize.graphs import laid_out, rendered, svg_texts


def test_two_agents_person_and_model_look_different() -> None:
    graph = laid_out(flow_to_dot(flows.load("two.yaml")))
    user, assistant = graph.nodes["node-USER"], graph.nodes["node-assistant"]
    assert user["shape"] == "ellipse" and "person" in user["label"]
    assert assistant["shape"] == "box" and "rounded" in assistant["style"]
    assert "mock · scripted" in assistant["label"]
    assert user["fillcolor"] != assistant["fillcolor"]
    # The start route runs from its sender to its addressee and carries the message.
    assert graph.ends(ids.START_EDGE_ID) == ("node-USER", "node-assistant")
    assert "How much is 2 + 2?" in graph.edges[ids.START_EDGE_ID]["label"]


def test_tools_and_providers_in_small_print() -> None:
    svg = rendered(flow_to_dot(flows.load("team.yaml")), "svg")
    texts = svg_texts(svg)
    assert "tools: math#add, math#multiply," in texts["node-mathematician"]
    assert "lookup" in texts["node-mathematician"]
    assert "claude · anthropic claude-sonnet-4-5" in texts["node-reviewer"]
    assert "person · asked every turn" in texts["node-USER"]
    # A name full of DOT and HTML syntax is drawn exactly as written.
    assert texts[ids.node_id(WRITER)].startswith(WRITER)


def test_nodes_a_run_names_but_the_flow_lacks_are_drawn_as_ghosts() -> None:
    events = flows.Log().message("USER", "stranger", "hello?").events
    graph = laid_out(flow_to_dot(flows.load("two.yaml"), events))
    assert "not in this flow" in graph.nodes["node-stranger"]["label"]
    assert graph.ends("message-USER-stranger") == ("node-USER", "node-stranger")


def test_run_overlay_prices_each_nodes_calls_with_the_flows_own_price() -> None:
    events = flows.team_run()
    price = "price: {input: 1000, output: 1000}"
    text = f"providers:\n  gpt: {{kind: openai, model: gpt-4o-mini, {price}}}\n"
    first = events[0]
    assert isinstance(first, RunStartEvent)
    start = first.model_copy(update={"flow": first.flow.model_copy(update={"text": text})})
    graph = laid_out(flow_to_dot(flows.load("team.yaml"), [start, *events[1:]]))
    # 257 tokens at $1000 a million, priced by the flow: not an estimate.
    label = graph.nodes["node-mathematician"]["label"]
    assert "257 tokens (240 in, 17 out) · 3 model calls · $0.26<" in label, label
