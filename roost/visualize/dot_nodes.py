"""The nodes of a drawing: agents, directors and the run's ghosts, with their labels.

An agent's look says what it is: a rounded box for a model agent (provider and
model in small print, its tools listed compactly), an oval for a person asked
every turn. With a run, visited nodes are filled, the others dashed, each shows
its tokens, and the node where the run ended is outlined in the state's colour.
The rows a run changes (tool calls, choices, tokens) come from ``counter_rows``,
which the run page also uses to show them as they stood at each step.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from roost.flow.models import (
    Agent,
    Channel,
    Flow,
    FlowTool,
    McpTool,
    ScriptedProviderConfig,
    ToolGroup,
)
from roost.visualize import ids
from roost.visualize.dot_text import Attrs, add_node, esc, shorten, small, table, wrap_list
from roost.visualize.run_summary import RunSummary, Tokens, names_in

if TYPE_CHECKING:
    from collections.abc import Sequence

    import graphviz

    from roost.events import Event
    from roost.pricing import RunCost

# (text, colour) of one row of small print; an empty text is a row not drawn.
Row = tuple[str, str]
TOOLS_INK = "#2d3748"
COUNT_INK = "#1a202c"

HUMAN = {"fill": "#fdebc8", "line": "#b7791f"}
MODEL = {"fill": "#dcebfa", "line": "#2f6ea8"}
DIRECTOR = {"fill": "#ece3f7", "line": "#6b46a3"}
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
STATE_COLOURS = {"terminated": "#4a5568", "paused": "#d69e2e", "error": "#c53030"}


def agent_node(
    graph: graphviz.Digraph, flow: Flow, name: str, agent: Agent, run: RunSummary | None
) -> None:
    """Adds an agent's node: a person (oval) or a model agent (rounded box)."""
    human = flow.interrupt_of(name) == "ALWAYS"
    look = HUMAN if human else MODEL
    rows = [f"<B>{esc(name, 40)}</B>"]
    if human:
        rows.append(small("person · asked every turn"))
    if not human or agent.provider:
        rows.append(small(esc(_provider_text(flow, name), 48)))
    rows += [small(esc(text), ink) for text, ink in counter_rows(flow, name, run) if text]
    style = _node_style(look, name, run, rounded=not human)
    _node(graph, name, rows, "ellipse" if human else "box", style, agent.description or agent.role)


def director_node(
    graph: graphviz.Digraph, flow: Flow, name: str, channel: Channel, run: RunSummary | None
) -> None:
    """Adds a channel's director node: strategy, provider and cap."""
    director = channel.director
    strategy = director.strategy.replace("_", " ")
    rows = [small("director", DIRECTOR["line"]), f"<B>{esc(name, 40)}</B>", small(esc(strategy))]
    if director.strategy == "llm":
        rows.append(small(esc(_provider_text(flow, name), 48)))
    cap = f"cap {channel.max_rounds} rounds" + (" · repeats" if director.allow_repeat else "")
    rows.append(small(esc(cap)))
    rows += [small(esc(text), ink) for text, ink in counter_rows(flow, name, run) if text]
    style = _node_style(DIRECTOR, name, run, rounded=False)
    _node(graph, name, rows, "box", style, channel.description or channel.role)


def counter_rows(flow: Flow, name: str, run: RunSummary | None) -> list[Row]:
    """The rows of node ``name`` that a run's events change, always the same number of them.

    An agent's tool lines (with call counts) and its tokens; a director's choices and
    its tokens. A row the run has not reached yet is empty, and is not drawn.
    """
    rows: list[Row] = []
    agent = flow.agents.get(name)
    if agent is not None:
        calls: dict[str, int] = dict(run.tool_calls.get(name, {})) if run else {}
        rows += [(line, TOOLS_INK) for line in _tool_lines(flow, agent, calls)]
    elif name in flow.channels:
        rows.append((_choices_text(name, run), COUNT_INK))
    tokens = run.tokens.get(name) if run else None
    cost = run.costs.get(name) if run else None
    rows.append((_tokens_text(tokens, cost) if tokens is not None else "", COUNT_INK))
    return rows


def _node(
    graph: graphviz.Digraph,
    name: str,
    rows: list[str],
    shape: str,
    style: Attrs,
    tooltip: str | None,
) -> None:
    """Adds one node; the tooltip (a role or description) shows on hover in SVG."""
    values: Attrs = {"id": ids.node_id(name), "label": table(rows), "shape": shape, **style}
    values["tooltip"] = shorten(tooltip or name, 300)
    add_node(graph, ids.node_id(name), values)


def _node_style(look: dict[str, str], name: str, run: RunSummary | None, *, rounded: bool) -> Attrs:
    """Filled when drawing a flow, or when the run visited the node; the final node outlined."""
    visited = run is None or name in run.visited
    style = ["rounded"] if rounded else []
    style += ["filled"] if visited else ["dashed"]
    colour = look["line"]
    width = 1.2
    if run is not None and run.final.node == name and run.final.status in STATE_COLOURS:
        colour, width = STATE_COLOURS[run.final.status], 3.0
    return {
        "style": ",".join(style),
        "fillcolor": look["fill"],
        "color": colour,
        "penwidth": width,
        "fontcolor": "#1a202c" if visited else "#718096",
    }


def _provider_text(flow: Flow, node: str) -> str:
    name = flow.provider_of(node)
    if name is None:
        return "no provider"
    config = flow.providers.get(name)
    if config is None:
        return f"{name} (not declared)"
    if isinstance(config, ScriptedProviderConfig):
        return f"{name} · scripted"
    return f"{name} · {config.kind} {config.model}"


def _tool_lines(flow: Flow, agent: Agent, calls: dict[str, int]) -> list[str]:
    """``tools: add, summarize (flow), units#convert (mcp)``, with call counts from a run."""
    if not agent.functions:
        return []
    names, counts = [], []
    for ref in agent.functions:
        short = ref.removeprefix("@@")
        kind = _tool_kind(flow, short)
        count = sum(calls.get(name, 0) for name in _call_names(short))
        names.append(short + (f" ({kind})" if kind else ""))
        counts.append(f" ×{count}" if count else "")
    lines = wrap_list(names, suffixes=counts)
    lines[0] = "tools: " + lines[0]
    return lines


def _call_names(ref: str) -> set[str]:
    """Names a tool_call event may give this reference: as written, or as offered to a
    model, where ``#`` becomes ``__`` and other unsafe characters ``_``."""
    wire = ref.replace("#", "__")
    return {ref, wire, _UNSAFE.sub("_", wire)}


def _tool_kind(flow: Flow, ref: str) -> str:
    """``flow`` or ``mcp`` for tools that are not plain Python functions, else ``""``."""
    head, _, child = ref.partition("#")
    tool = flow.tools.get(head)
    if isinstance(tool, ToolGroup):
        tool = tool.tools.get(child)
    if isinstance(tool, FlowTool):
        return "flow"
    if isinstance(tool, McpTool) or (tool is None and head in flow.mcp_servers):
        return "mcp"
    return ""


def _choices_text(channel: str, run: RunSummary | None) -> str:
    choices = sum(n for (where, _), n in run.picks.items() if where == channel) if run else 0
    if not choices:
        return ""
    return f"{choices} choice" + ("" if choices == 1 else "s")


def _tokens_text(tokens: Tokens, cost: RunCost | None) -> str:
    calls = f"{tokens.calls} model call" + ("" if tokens.calls == 1 else "s")
    if tokens.total == 0:  # the scripted provider, or a server that reports no usage
        return calls
    text = f"{tokens.total:,} tokens ({tokens.prompt:,} in, {tokens.completion:,} out) · {calls}"
    return text + (f" · {cost.text()}" if cost is not None else "")


def ghost_nodes(graph: graphviz.Digraph, flow: Flow, events: Sequence[Event]) -> None:
    """Adds the nodes a run mentions that this flow does not have (the run used another
    version of it)."""
    for name in names_in(events):
        if flow.node_kind(name) is None:
            rows = [f"<B>{esc(name, 40)}</B>", small("not in this flow")]
            style: Attrs = {"style": "dashed", "color": "#a0aec0"}
            _node(graph, name, rows, "box", style, "not in this flow")
