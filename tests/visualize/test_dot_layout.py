"""Layout hints for big flows: channels stacked, loose agents in rows, nothing overlapping."""

from __future__ import annotations

import itertools

from roost.flow.models import Flow
from roost.visualize import flow_to_dot, ids
from tests.visualize import flows
from tests.visualize.graphs import Graph, laid_out


def _boxes(graph: Graph) -> dict[str, tuple[float, float, float, float]]:
    boxes = {}
    for node_id, node in graph.nodes.items():
        x, y = (float(v) for v in node["pos"].split(","))
        w, h = float(node["width"]) * 72 / 2, float(node["height"]) * 72 / 2
        boxes[node_id] = (x - w, y - h, x + w, y + h)
    return boxes


def test_thirty_agents_are_all_drawn_without_overlap() -> None:
    flow = flows.big_flow(30)
    graph = laid_out(flow_to_dot(flow))
    agents = {ids.node_id(name) for name in flow.agents}
    assert len(agents) == 30 and agents <= set(graph.nodes)
    for index in range(3):
        assert f"node-room{index}" in graph.clusters[f"cluster-room{index}"]
    boxes = _boxes(graph)
    for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
        apart = box_a[2] <= box_b[0] or box_b[2] <= box_a[0] or box_a[3] <= box_b[1]
        assert apart or box_b[3] <= box_a[1], f"{a} overlaps {b}"
    # Readable on a screen: channels are stacked, so the picture is about as wide as tall
    # (side by side it was five times wider, and its text tiny once fitted to a screen).
    x0, y0, x1, y1 = (float(v) for v in graph.attrs["bb"].split(","))
    assert 0.4 < (x1 - x0) / (y1 - y0) < 2
    tops = [float(graph.nodes[f"node-room{i}"]["pos"].split(",")[1]) for i in range(3)]
    assert tops[0] > tops[1] > tops[2]  # room0 above room1 above room2 (y grows upwards)


def test_thirty_agents_outside_channels_wrap_into_rows() -> None:
    agents: dict[str, dict[str, str]] = {f"a{i:02d}": {} for i in range(29)}
    agents["USER"] = {"interrupt": "ALWAYS"}
    flow = Flow.model_validate(
        {"roost": 1, "name": "crowd", "agents": agents, "start": {"from": "USER", "to": "a00"}}
    )
    events = flows.Log().message("USER", "a00", "hi").message("a00", "a17", "pass it on").events
    graph = laid_out(flow_to_dot(flow, events))
    rows = {node["pos"].split(",")[1] for key, node in graph.nodes.items() if key != "run-state"}
    assert len(rows) >= 4  # one long line of thirty would be one row
    x0, y0, x1, y1 = (float(v) for v in graph.attrs["bb"].split(","))
    assert (x1 - x0) / (y1 - y0) < 4.5
    user, first = graph.nodes["node-USER"]["pos"], graph.nodes["node-a00"]["pos"]
    assert float(user.split(",")[1]) > float(first.split(",")[1])  # the start arrow points down
