"""flow_to_dot: the structure of the drawing, checked on what Graphviz itself parses."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Literal

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from roost.events import RunStartEvent
from roost.flow import load_flow_text
from roost.flow.models import Flow
from roost.visualize import flow_to_dot, ids, run_page_html
from tests.visualize import flows
from tests.visualize.graphs import Graph, laid_out, rendered, svg_texts

WRITER = 'writer "quoted" <b>&{x}'


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


def test_channel_is_a_cluster_with_director_members_and_transitions() -> None:
    flow = flows.load("team.yaml")
    graph = laid_out(flow_to_dot(flow))
    members = {ids.node_id(m) for m in ["mathematician", "reviewer", "USER", WRITER]}
    assert graph.clusters["cluster-team"] == {"node-team", *members}
    director = graph.nodes["node-team"]["label"]
    assert "director" in director and "llm" in director and "cap 10 rounds" in director
    assert "gpt · openai gpt-4o-mini" in director
    member_edges = {e for e in graph.edges if e.startswith("member-team-")}
    assert {graph.ends(e) for e in member_edges} == {("node-team", m) for m in members}
    assert all(graph.edges[e]["dir"] == "none" for e in member_edges)
    transitions = {graph.ends(e) for e in graph.edges if e.startswith("transition-")}
    expected = {
        (ids.node_id(source), ids.node_id(target))
        for source, targets in (flow.channels["team"].transitions or {}).items()
        for target in targets
    }
    assert transitions == expected and len(expected) == 6
    # The start message goes into the channel from a dot (its sender is a member).
    assert graph.ends(ids.START_EDGE_ID) == (ids.START_NODE_ID, "node-team")
    assert "start: USER" in graph.edges[ids.START_EDGE_ID]["label"]


def test_tools_and_providers_in_small_print() -> None:
    svg = rendered(flow_to_dot(flows.load("team.yaml")), "svg")
    texts = svg_texts(svg)
    assert "tools: math#add, math#multiply," in texts["node-mathematician"]
    assert "lookup" in texts["node-mathematician"]
    assert "claude · anthropic claude-sonnet-4-5" in texts["node-reviewer"]
    assert "person · asked every turn" in texts["node-USER"]
    # A name full of DOT and HTML syntax is drawn exactly as written.
    assert texts[ids.node_id(WRITER)].startswith(WRITER)


# The team flow with its run, drawn in a process of its own.
DRAW = (
    "import sys; from tests.visualize import flows; from roost.visualize import flow_to_dot; "
    "sys.stdout.write(flow_to_dot(flows.load('team.yaml'), flows.team_run()))"
)


def test_dot_source_is_the_same_in_every_process() -> None:
    """Drawn here and in two processes whose string hashes (so set orders) differ."""
    here = flow_to_dot(flows.load("team.yaml"), flows.team_run())
    root = Path(__file__).parents[2]
    for hash_seed in ("1", "2"):
        environ = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(root)}
        drawn = subprocess.run(
            [sys.executable, "-c", DRAW],
            cwd=root,
            env=environ,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert drawn.stdout == here, f"PYTHONHASHSEED={hash_seed}"


def test_run_overlay_counts_messages_tokens_and_visits() -> None:
    graph = laid_out(flow_to_dot(flows.load("team.yaml"), flows.team_run()))
    assert graph.edges["member-team-mathematician"]["label"].strip() == "2 msgs"
    assert graph.edges["member-team-USER"]["label"].strip() == "2 msgs"
    assert graph.edges["member-team-reviewer"]["label"].strip() == "1 msg"
    assert graph.edges[ids.member_edge_id("team", WRITER)].get("label", "") == ""
    # Visited nodes are filled; the writer never took part.
    assert "filled" in graph.nodes["node-reviewer"]["style"]
    assert "filled" not in graph.nodes[ids.node_id(WRITER)]["style"]
    assert "dashed" in graph.nodes[ids.node_id(WRITER)]["style"]
    # Tokens per node: the sum of llm_call usage (prompt + completion).
    assert (
        "257 tokens (240 in, 17 out) · 3 model calls" in graph.nodes["node-mathematician"]["label"]
    )
    # And what they cost, from the table's list prices: estimated.
    assert "3 model calls · &lt;$0.0001 (estimated)" in graph.nodes["node-mathematician"]["label"]
    assert "42 tokens" in graph.nodes["node-team"]["label"]
    assert "4 choices" in graph.nodes["node-team"]["label"]  # the director's select events
    assert "math#add ×1" in graph.nodes["node-mathematician"]["label"]


def test_final_state_terminated_paused_and_error() -> None:
    flow = flows.load("team.yaml")
    ended = laid_out(flow_to_dot(flow, flows.team_run("terminated")))
    assert "terminated at team" in ended.nodes[ids.STATE_NODE_ID]["label"]
    assert ended.ends("run-state-edge") == (ids.STATE_NODE_ID, "node-team")
    assert float(ended.nodes["node-team"]["penwidth"]) == 3.0

    paused = laid_out(flow_to_dot(flow, flows.team_run("paused")))
    assert "paused: waiting for USER" in paused.nodes[ids.STATE_NODE_ID]["label"]
    assert paused.ends("run-state-edge") == (ids.STATE_NODE_ID, "node-USER")

    failed = laid_out(flow_to_dot(flow, flows.team_run("error")))
    label = failed.nodes[ids.STATE_NODE_ID]["label"]
    assert "error at mathematician → team" in label and "rate limited" in label
    assert failed.ends("run-state-edge") == (ids.STATE_NODE_ID, "node-mathematician")


def test_two_agent_run_draws_message_edges_both_ways() -> None:
    graph = laid_out(flow_to_dot(flows.load("two.yaml"), flows.two_run()))
    assert graph.ends("message-USER-assistant") == ("node-USER", "node-assistant")
    assert graph.edges["message-USER-assistant"]["label"].strip() == "2 msgs"
    assert graph.edges["message-assistant-USER"]["label"].strip() == "2 msgs"
    assert "30 tokens" in graph.nodes["node-assistant"]["label"]
    assert "terminated at USER" in graph.nodes[ids.STATE_NODE_ID]["label"]


def test_nodes_a_run_names_but_the_flow_lacks_are_drawn_as_ghosts() -> None:
    events = flows.Log().message("USER", "stranger", "hello?").events
    graph = laid_out(flow_to_dot(flows.load("two.yaml"), events))
    assert "not in this flow" in graph.nodes["node-stranger"]["label"]
    assert graph.ends("message-USER-stranger") == ("node-USER", "node-stranger")


def test_empty_run_marks_nothing_visited() -> None:
    graph = laid_out(flow_to_dot(flows.load("two.yaml"), []))
    assert "filled" not in graph.nodes["node-assistant"]["style"]
    assert "new" in graph.nodes[ids.STATE_NODE_ID]["label"]


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


def test_an_agent_in_two_channels_stands_outside_both() -> None:
    flow = Flow.model_validate(
        {
            "roost": 1,
            "name": "shared",
            "agents": {"a": {}, "b": {}, "c": {}, "both": {}},
            "channels": {"one": {"members": ["a", "both"]}, "two": {"members": ["b", "c", "both"]}},
        }
    )
    graph = laid_out(flow_to_dot(flow))
    assert graph.clusters["cluster-one"] == {"node-one", "node-a"}
    assert graph.clusters["cluster-two"] == {"node-two", "node-b", "node-c"}
    assert graph.ends("member-one-both") == ("node-one", "node-both")
    assert graph.ends("member-two-both") == ("node-two", "node-both")


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
