"""The conversation graph of a flow, and the warnings only the whole graph can show.

Nodes are agents and channels. Edges: a channel and each of its members (both
ways), each transition (speaker to successor), and the start route (both
ways, since a reply goes back to the sender).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

if TYPE_CHECKING:
    from roost.flow.checks import Checker
    from roost.flow.models import Flow

ENDLESS = 1000  # a round cap at or above this does not stop a loop in practice


def build_graph(flow: Flow) -> nx.DiGraph:
    """The flow's nodes and routes; each edge carries ``kind`` and the ``cap`` on its rounds."""
    graph = nx.DiGraph()
    for name in flow.agents:
        graph.add_node(name, kind="agent")
    for name in flow.channels:
        graph.add_node(name, kind="channel")
    for name, channel in flow.channels.items():
        cap = min(channel.max_rounds, flow.defaults.max_rounds * max(len(channel.members), 1))
        for member in channel.members:
            if member in flow.agents:
                graph.add_edge(name, member, kind="member", cap=cap)
                graph.add_edge(member, name, kind="member", cap=cap)
        for speaker, successors in (channel.transitions or {}).items():
            for successor in successors:
                if speaker in flow.agents and successor in flow.agents:
                    graph.add_edge(speaker, successor, kind="transition", cap=cap)
    start = flow.start
    if start is not None and start.from_ in graph and start.to in graph:
        graph.add_edge(start.from_, start.to, kind="start", cap=flow.defaults.max_rounds)
        graph.add_edge(start.to, start.from_, kind="start", cap=flow.defaults.max_rounds)
    return graph


def check_graph(c: Checker) -> None:
    """Warns about agents no route reaches and loops of agents nothing stops."""
    if not c.flow.channels and c.flow.start is None:
        return  # no route at all: nothing to reach and nothing to loop
    graph = build_graph(c.flow)
    _unreachable(c, graph)
    _endless_loops(c, graph)


def _unreachable(c: Checker, graph: nx.DiGraph) -> None:
    flow = c.flow
    start = flow.start
    if start is not None:
        entries = [n for n in (start.from_, start.to) if n in graph]
        if not entries:
            return
        reached = set(entries).union(*(nx.descendants(graph, n) for n in entries))
        why = "no route from the start message reaches it"
    elif flow.channels:
        reached = {n for n in graph if graph.degree(n) > 0}
        why = "it is in no channel and there is no start route"
    else:
        return
    for name in flow.agents:
        if name not in reached:
            c.at_key(("agents", name), f"agent {name!r} is unreachable: {why}", "warning")


def _endless_loops(c: Checker, graph: nx.DiGraph) -> None:
    flow = c.flow
    never = {a for a in flow.agents if flow.interrupt_of(a) == "NEVER"}
    counted = never.union(flow.channels)
    loose = nx.DiGraph()  # only nodes on an uncapped route can be in a loop
    loose.add_edges_from(
        (u, v)
        for u, v, cap in graph.edges(data="cap")
        if u in counted and v in counted and cap >= ENDLESS
    )
    for component in nx.strongly_connected_components(loose):
        agents = sorted(n for n in component if n in flow.agents)
        if len(agents) < 2:
            continue
        channels = sorted(n for n in component if n in flow.channels)
        path: tuple[str, ...] = ("start",)
        if channels:
            path = ("channels", channels[0], "max_rounds")
        elif flow.start is None:
            path = ("defaults", "max_rounds")
        names = ", ".join(repr(a) for a in agents)
        c.at_key(
            path,
            f"agents {names} never interrupt and no round cap below {ENDLESS} stops them; "
            "lower max_rounds",
            "warning",
        )
