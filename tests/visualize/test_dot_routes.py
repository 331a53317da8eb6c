"""Routes drawn: an edge labelled with its condition, TERMINATE to an end mark (issue 28)."""

from __future__ import annotations

from pathlib import Path

from roost import load_flow
from roost.visualize import flow_to_dot, ids
from tests.visualize.graphs import laid_out

EXAMPLE = Path(__file__).resolve().parents[2] / "flows" / "review_loop.yaml"


def test_each_route_is_an_edge_labelled_with_its_condition() -> None:
    graph = laid_out(flow_to_dot(load_flow(EXAMPLE)))
    back = ids.route_edge_id("review", "critic", 0)
    on = ids.route_edge_id("review", "critic", 1)
    assert graph.ends(back) == (ids.node_id("critic"), ids.node_id("writer"))
    assert graph.ends(on) == (ids.node_id("critic"), ids.node_id("editor"))
    assert "verdict = revise" in graph.edges[back]["label"]
    assert "verdict = approve" in graph.edges[on]["label"]


def test_a_route_to_terminate_leads_to_an_end_mark() -> None:
    graph = laid_out(flow_to_dot(load_flow(EXAMPLE)))
    route = ids.route_edge_id("review", "owner", 0)
    end = ids.route_end_id("review", "owner", 0)
    assert graph.ends(route) == (ids.node_id("owner"), end)
    assert graph.nodes[end]["shape"] == "doublecircle"
    label = graph.edges[route]["label"]
    assert "matches /(?i)" in label and "signed off" in label  # backslashes kept for dot
    # the plain name beside it stays a plain transition
    plain = ids.transition_edge_id("review", "owner", "writer")
    assert graph.ends(plain) == (ids.node_id("owner"), ids.node_id("writer"))
