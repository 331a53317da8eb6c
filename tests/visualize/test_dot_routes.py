"""Routes drawn: an edge labelled with its condition, TERMINATE to an end mark."""

from __future__ import annotations

from pathlib import Path

from roost import load_flow
from roost.flow import load_flow_text
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


def test_over_a_run_each_route_says_how_often_it_was_taken() -> None:
    import asyncio

    from roost.engine import Runner
    from roost.ports import MemoryLog

    flow = load_flow(EXAMPLE)
    log = MemoryLog("r")
    runner = Runner(flow=flow, log=log)
    asyncio.run(runner.start())
    asyncio.run(runner.continue_("Signed off."))
    graph = laid_out(flow_to_dot(flow, log.load()))
    labels = {
        position: graph.edges[ids.route_edge_id("review", "critic", position)]["label"]
        for position in (0, 1)
    }
    assert "verdict = revise (1×)" in labels[0] and "verdict = approve (1×)" in labels[1]
    assert "(1×)" in graph.edges[ids.route_edge_id("review", "owner", 0)]["label"]
    # Without a run no count is drawn.
    bare = laid_out(flow_to_dot(flow))
    assert "×" not in bare.edges[ids.route_edge_id("review", "critic", 0)]["label"]


def test_a_route_after_a_plain_name_is_counted_by_its_place_among_the_routes() -> None:
    import asyncio

    from roost.engine import Runner
    from roost.ports import MemoryLog

    # The owner's entry written the other way round: the plain name first, then the route.
    text = EXAMPLE.read_text()
    route = """        - to: TERMINATE                       # the owner's sign-off ends the run
          when: {matches: "(?i)\\\\bsigned off\\\\b"}
"""
    plain = (
        "        - writer                              # anything else goes back to the writer\n"
    )
    assert route + plain in text
    flow = load_flow_text(text.replace(route + plain, plain + route), str(EXAMPLE))
    log = MemoryLog("r")
    runner = Runner(flow=flow, log=log)
    asyncio.run(runner.start())
    asyncio.run(runner.continue_("Signed off."))
    graph = laid_out(flow_to_dot(flow, log.load()))
    assert "(1×)" in graph.edges[ids.route_edge_id("review", "owner", 1)]["label"]
    assert "verdict = revise (1×)" in graph.edges[ids.route_edge_id("review", "critic", 0)]["label"]
