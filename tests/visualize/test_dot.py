"""flow_to_dot: the structure of the drawing, checked on what Graphviz itself parses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from roost.flow.models import Flow
from roost.visualize import flow_to_dot, ids
from tests.visualize import flows
from tests.visualize.flows import WRITER
from tests.visualize.graphs import laid_out


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


def test_empty_run_marks_nothing_visited() -> None:
    graph = laid_out(flow_to_dot(flows.load("two.yaml"), []))
    assert "filled" not in graph.nodes["node-assistant"]["style"]
    assert "new" in graph.nodes[ids.STATE_NODE_ID]["label"]


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
