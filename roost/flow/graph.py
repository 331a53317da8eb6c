"""The conversation graph of a flow, and the warnings only the whole graph can show.

Nodes are agents and channels. Edges: a channel and each of its members (both
ways), each transition (speaker to successor), and the start route (both
ways, since a reply goes back to the sender).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.flow.models import targets_of

if TYPE_CHECKING:
    from roost.flow.checks import Checker
    from roost.flow.models import Flow

ENDLESS = 1000  # a round cap at or above this does not stop a loop in practice

# A flow's graph is a handful of nodes, kept as plain dicts: networkx (a long import) is
# loaded only by the one check that needs its algorithms, and only when it has work.
Edges = dict[tuple[str, str], int]  # (from, to): the cap on that route's rounds


def build_graph(flow: Flow) -> tuple[set[str], Edges]:
    """The flow's nodes (agents and channels) and routes, each with the cap on its rounds."""
    nodes = set(flow.agents) | set(flow.channels)
    edges: Edges = {}
    for name, channel in flow.channels.items():
        cap = min(channel.max_rounds, flow.defaults.max_rounds * max(len(channel.members), 1))
        for member in channel.members:
            if member in flow.agents:
                edges[(name, member)] = edges[(member, name)] = cap
        for speaker, successors in (channel.transitions or {}).items():
            for successor in targets_of(successors):
                if speaker in flow.agents and successor in flow.agents:
                    edges[(speaker, successor)] = cap
    start = flow.start
    if start is not None and start.from_ in nodes and start.to in nodes:
        cap = flow.defaults.max_rounds
        edges[(start.from_, start.to)] = edges[(start.to, start.from_)] = cap
    return nodes, edges


def check_graph(c: Checker) -> None:
    """Warns about agents no route reaches and loops of agents nothing stops."""
    if not c.flow.channels and c.flow.start is None:
        return  # no route at all: nothing to reach and nothing to loop
    nodes, edges = build_graph(c.flow)
    _unreachable(c, nodes, edges)
    _endless_loops(c, edges)


def _reached(entries: list[str], edges: Edges) -> set[str]:
    """The nodes some route leads to from ``entries``, and the entries."""
    following: dict[str, list[str]] = {}
    for u, v in edges:
        following.setdefault(u, []).append(v)
    reached, todo = set(entries), list(entries)
    while todo:
        for v in following.get(todo.pop(), ()):
            if v not in reached:
                reached.add(v)
                todo.append(v)
    return reached


def _unreachable(c: Checker, nodes: set[str], edges: Edges) -> None:
    flow = c.flow
    start = flow.start
    if start is not None:
        entries = [n for n in (start.from_, start.to) if n in nodes]
        if not entries:
            return
        reached = _reached(entries, edges)
        why = "no route from the start message reaches it"
    elif flow.channels:
        reached = {n for edge in edges for n in edge}
        why = "it is in no channel and there is no start route"
    else:
        return
    for name in flow.agents:
        if name not in reached:
            c.at_key(("agents", name), f"agent {name!r} is unreachable: {why}", "warning")


def _endless_loops(c: Checker, edges: Edges) -> None:
    flow = c.flow
    never = {a for a in flow.agents if flow.interrupt_of(a) == "NEVER"}
    counted = never.union(flow.channels)
    # Only nodes on an uncapped route can be in a loop.
    uncapped = [
        (u, v) for (u, v), cap in edges.items() if u in counted and v in counted and cap >= ENDLESS
    ]
    if not uncapped:
        return
    import networkx as nx

    loose = nx.DiGraph()
    loose.add_edges_from(uncapped)
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
