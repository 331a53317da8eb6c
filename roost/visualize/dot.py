"""A flow, and optionally a run over it, as a Graphviz graph (a pure function).

Agents are nodes whose shape says what they are (``dot_nodes``): a rounded box
for a model agent (its provider and model in small print), an oval for a person
who is asked every turn. Each channel is a cluster around its director node (strategy
and cap), joined to its members by dashed edges; ``transitions`` are arrows in
the channel's colour; the start route enters from a black dot. Given events,
edges carry the number of messages that crossed them, visited nodes are
filled, each node shows its tokens and a note marks the final state.
Every node and edge has a stable ``id`` (see ``roost.visualize.ids``) that the
run page uses to highlight what an event touched.

The graph is a ``graphviz.Digraph``, which writes and quotes the DOT source;
laying it out (running ``dot``) is ``dot_program``'s job.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from roost.flow.models import ROUTE_END, Route
from roost.flow.routes import short_label
from roost.visualize import ids
from roost.visualize.dot_layout import (
    PAGE_STAGGER_AT,
    STAGGER_AT,
    grid_loose_agents,
    in_grid,
    stack_channels,
    stagger,
)
from roost.visualize.dot_nodes import STATE_COLOURS, agent_node, director_node, ghost_nodes
from roost.visualize.dot_text import (
    Attrs,
    Html,
    add_edge,
    add_node,
    dot_attrs,
    esc,
    hiding,
    plain,
    shorten,
    small,
)
from roost.visualize.run_summary import (
    FinalState,
    RunSummary,
    is_member_route,
    route_edge_id,
    summarize,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import graphviz

    from roost.events import Event
    from roost.flow.models import Channel, Flow

CHANNEL_COLOURS = ["#6b46a3", "#2c7a7b", "#b83280", "#c05621", "#2b6cb0", "#276749"]
NODE_LOOK: Attrs = {"fontname": "Helvetica", "fontsize": 12, "margin": "0.12,0.06"}
EDGE_LOOK: Attrs = {"fontname": "Helvetica", "fontsize": 9, "color": "#4a5568", "arrowsize": 0.7}


def flow_to_dot(
    flow: Flow,
    events: Sequence[Event] | None = None,
    *,
    title: bool = True,
    mark_final: bool = True,
    for_page: bool = False,
) -> str:
    """The DOT source drawing ``flow``; with ``events``, what that run did over it.

    The options are ``flow_graph``'s.
    """
    graph = flow_graph(flow, events, title=title, mark_final=mark_final, for_page=for_page)
    source: str = graph.source
    return source


def flow_graph(
    flow: Flow,
    events: Sequence[Event] | None = None,
    *,
    title: bool = True,
    mark_final: bool = True,
    for_page: bool = False,
) -> graphviz.Digraph:
    """The graph drawing ``flow``; with ``events``, what that run did over it.

    ``title=False`` leaves out the flow's name and description above the graph, and
    ``mark_final=False`` leaves the node where the run ended without its coloured
    outline and the run without its state note (the run page shows them itself, at
    the right moment, and a note drawn but hidden would widen the drawing).
    ``for_page=True`` wraps channels of more than three members into rows, to suit the
    run page's pane, about as tall as wide. Values that came from the environment
    (``flow.secrets``) are masked wherever text is drawn.
    """
    import graphviz

    with hiding(flow.secrets):
        graph = graphviz.Digraph(
            plain(flow.name),
            graph_attr=dot_attrs(_graph_attrs(flow, title)),
            node_attr=dot_attrs(NODE_LOOK),
            edge_attr=dot_attrs(EDGE_LOOK),
        )
        wrap_over = PAGE_STAGGER_AT if for_page else STAGGER_AT
        _draw(graph, flow, events, mark_final, wrap_over)
    return graph


def _draw(
    graph: graphviz.Digraph,
    flow: Flow,
    events: Sequence[Event] | None,
    mark_final: bool,
    wrap_over: int,
) -> None:
    # Graphviz places nodes in the order it reads them: this order is the layout's.
    run = summarize(flow, events) if events is not None else None
    node_run = run
    if run is not None and not mark_final:
        node_run = replace(run, final=FinalState(run.final.status))
    placed = _home_channels(flow)
    for index, (name, channel) in enumerate(flow.channels.items()):
        members = [m for m in channel.members if placed.get(m) == name]
        _cluster(graph, flow, name, channel, members, index, node_run)
    for name, agent in flow.agents.items():
        if name not in placed:
            agent_node(graph, flow, name, agent, node_run)
    if events is not None:
        ghost_nodes(graph, flow, events)
    for index, (name, channel) in enumerate(flow.channels.items()):
        _member_edges(graph, name, channel, run, wrap_over)
        # The run page (mark_final off) shows each step as it stood: no final counts there.
        _transition_edges(graph, name, channel, index, run if mark_final else None)
    stack_channels(graph, flow, wrap_over)
    grid_loose_agents(graph, flow)
    _start_route(graph, flow)
    if run is not None:
        _message_edges(graph, flow, run)
        if mark_final:
            _state_note(graph, run)


def _graph_attrs(flow: Flow, title: bool) -> Attrs:
    heading = flow.name + (f" — {flow.description}" if flow.description else "")
    return {
        "id": "flow",
        "charset": "UTF-8",
        "rankdir": "TB",
        "fontname": "Helvetica",
        "labelloc": "t",
        "label": Html(f"<B>{esc(heading, 120)}</B>") if title else None,
        "nodesep": 0.5,
        "ranksep": 0.5,
        "newrank": True,
        "bgcolor": "white",
        "tooltip": flow.name,
    }


def _home_channels(flow: Flow) -> dict[str, str]:
    """Agents drawn inside a channel's cluster: those that are members of exactly one."""
    seen: dict[str, list[str]] = {}
    for name, channel in flow.channels.items():
        for member in channel.members:
            if member in flow.agents:
                seen.setdefault(member, []).append(name)
    return {agent: homes[0] for agent, homes in seen.items() if len(homes) == 1}


# --------------------------------------------------------------------------- clusters and edges


def _cluster(
    graph: graphviz.Digraph,
    flow: Flow,
    name: str,
    channel: Channel,
    members: list[str],
    index: int,
    run: RunSummary | None,
) -> None:
    colour = CHANNEL_COLOURS[index % len(CHANNEL_COLOURS)]
    frame: Attrs = {
        "id": "cluster-" + ids.slug(name),
        "label": Html(small(esc(f"channel {name}", 60), colour, 10)),
        "style": "rounded,filled",
        "fillcolor": "#faf8fd",
        "color": colour,
        "labeljust": "l",
    }
    # Graphviz draws a subgraph whose name starts with "cluster" as a framed box.
    with graph.subgraph(name="cluster_" + ids.slug(name), graph_attr=dot_attrs(frame)) as inner:
        director_node(inner, flow, name, channel, run)
        for member in members:
            agent_node(inner, flow, member, flow.agents[member], run)


def _member_edges(
    graph: graphviz.Digraph, name: str, channel: Channel, run: RunSummary | None, wrap_over: int
) -> None:
    for position, member in enumerate(channel.members):
        count = _member_messages(name, member, run) if run else 0
        edge: Attrs = {
            "id": ids.member_edge_id(name, member),
            "dir": "none",
            "style": "solid" if count else "dashed",
            "color": "#2d3748" if count else "#a0aec0",
            "penwidth": _width(count) if count else 1.0,
            "minlen": stagger(len(channel.members), position, wrap_over),
            "label": _count_label(count) if run is not None else None,
            "tooltip": f"{member} is a member of {name}",
        }
        add_edge(graph, ids.node_id(name), ids.node_id(member), edge)


def _member_messages(channel: str, member: str, run: RunSummary) -> int:
    return run.messages[(member, channel)] + run.messages[(channel, member)]


def _transition_edges(
    graph: graphviz.Digraph, name: str, channel: Channel, index: int, run: RunSummary | None
) -> None:
    colour = CHANNEL_COLOURS[index % len(CHANNEL_COLOURS)]
    for source, successors in (channel.transitions or {}).items():
        routes = 0  # the routes before this one: a decision records them in this order
        for position, successor in enumerate(successors):
            if isinstance(successor, Route):
                taken = run.taken[(name, source, routes)] if run is not None else None
                _route_edge(graph, name, source, position, successor, colour, taken)
                routes += 1
                continue
            edge: Attrs = {
                "id": ids.transition_edge_id(name, source, successor),
                "color": colour,
                "style": "solid",
                "constraint": False,
                "tooltip": f"in {name}: {successor} may speak after {source}",
            }
            add_edge(graph, ids.node_id(source), ids.node_id(successor), edge)


def _route_edge(
    graph: graphviz.Digraph,
    name: str,
    source: str,
    position: int,
    route: Route,
    colour: str,
    taken: int | None = None,
) -> None:
    """A route: an edge labelled with its condition in short (and, over a run, how often
    it was taken: ``verdict = revise (2×)``); to TERMINATE, to an end mark."""
    condition = short_label(route.when)
    shown = esc(shorten(condition, 40)) + (f" ({taken}×)" if taken is not None else "")
    edge: Attrs = {
        "id": ids.route_edge_id(name, source, position),
        "color": colour,
        "style": "solid" if route.when is None else "bold",
        "penwidth": _width(taken) if taken else None,
        "constraint": False,
        "label": Html(small(shown, colour, 9)),
        "tooltip": f"in {name}: {route.to} after {source} when {condition}",
    }
    target = ids.node_id(route.to)
    if route.to == ROUTE_END:
        target = ids.route_end_id(name, source, position)
        end: Attrs = {"id": target, "shape": "doublecircle", "label": "", "width": 0.15}
        end |= {"style": "filled", "fillcolor": "#1a202c", "color": "#1a202c"}
        end["tooltip"] = f"the run ends when {source}'s route to TERMINATE holds"
        add_node(graph, target, end)
    add_edge(graph, ids.node_id(source), target, edge)


def _start_route(graph: graphviz.Digraph, flow: Flow) -> None:
    """A green edge into the start node: from its sender, or from a dot when the sender is
    a member of the channel it starts (an edge up into one's own channel reads badly)."""
    if flow.start is None:
        return
    start = flow.start
    green = "#22543d"
    quoted = f"\n“{shorten(' '.join(start.content.split()), 48)}”" if start.content else ""
    edge: Attrs = {
        "id": ids.START_EDGE_ID,
        "color": green,
        "penwidth": 2.0,
        "tooltip": f"start: {start.from_} -> {start.to}",
    }
    if in_grid(flow):
        edge["constraint"] = False
    if flow.node_kind(start.from_) == "agent" and not is_member_route(flow, start.from_, start.to):
        edge["label"] = Html(small(esc("start" + quoted), green, 9))
        add_edge(graph, ids.node_id(start.from_), ids.node_id(start.to), edge)
        return
    edge["label"] = Html(small(esc(f"start: {shorten(start.from_, 30)}{quoted}"), green, 9))
    dot: Attrs = {"id": ids.START_NODE_ID, "shape": "circle", "style": "filled", "label": ""}
    dot |= {"fillcolor": green, "color": green, "width": 0.18}
    add_node(graph, ids.START_NODE_ID, dot)
    add_edge(graph, ids.START_NODE_ID, ids.node_id(start.to), edge)


def _message_edges(graph: graphviz.Digraph, flow: Flow, run: RunSummary) -> None:
    """Edges for routes between two nodes that no member edge stands for."""
    grid = in_grid(flow)
    for source, target in sorted(run.routes):
        if is_member_route(flow, source, target) is not None:
            continue
        count = run.messages[(source, target)]
        edge: Attrs = {
            "id": route_edge_id(flow, source, target),
            "color": "#2d3748" if count else "#c53030",
            "style": "solid" if count else "dotted",
            "penwidth": _width(count),
            "label": _count_label(count),
            "tooltip": f"{source} -> {target}: {count} message" + ("" if count == 1 else "s"),
            "constraint": False if grid else None,
        }
        add_edge(graph, ids.node_id(source), ids.node_id(target), edge)


def state_text(final: FinalState) -> str:
    """Where a run stands, in a line or two: its state note's text."""
    if final.status == "terminated":
        return f"terminated at {final.node}" + (f"\n{final.detail}" if final.detail else "")
    if final.status == "paused":
        return f"paused: waiting for {final.node}\n(answering {final.peer})"
    if final.status == "error":
        return f"error at {final.node} → {final.peer}\n{final.detail}"
    return final.status


def _state_note(graph: graphviz.Digraph, run: RunSummary) -> None:
    final = run.final
    colour = STATE_COLOURS.get(final.status, "#718096")
    text = state_text(final)
    label = esc(text, 160)
    for seq, path in run.flows[-3:]:  # a run rescued with --flow says under which flow
        label += "<BR/>" + esc(f"from event {seq} under {path}", 120)
    note: Attrs = {
        "id": ids.STATE_NODE_ID,
        "shape": "note",
        "style": "filled",
        "fillcolor": "white",
        "color": colour,
        "penwidth": 2.0,
        "label": Html(f'<FONT COLOR="{colour}">{label}</FONT>'),
    }
    add_node(graph, ids.STATE_NODE_ID, note)
    if final.node is not None:
        edge: Attrs = {"style": "dotted", "color": colour, "arrowhead": "none"}
        edge["id"] = "run-state-edge"
        add_edge(graph, ids.STATE_NODE_ID, ids.node_id(final.node), edge)


def _width(count: int) -> float:
    return round(float(1.0 + min(count, 40) ** 0.5 * 0.6), 2)


def _count_label(count: int) -> str:
    # Padded with spaces so the label stands clear of the edge it belongs to.
    return f" {count} msg " if count == 1 else (f" {count} msgs " if count else "")
