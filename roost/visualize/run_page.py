"""The run page: one self-contained HTML file that steps through a run over its graph.

The page holds everything it needs: the graph as inline SVG (ids from
``roost.visualize.ids``), the stylesheet, the script and the events as JSON. It
loads nothing from the network, so it opens from disk in any browser. The
script builds the transcript once and, at each step, only toggles classes on
the elements that change, so stepping stays fast for thousands of events.
The graph shows the run as it stood at the current step: message counts on
edges, and each node's tokens, model calls, tool calls and choices so far.
"""

from __future__ import annotations

import base64
import html
import json
import re
from importlib import resources
from typing import TYPE_CHECKING, Any

from roost.events import BudgetEvent, Event, LlmCallEvent, MessageEvent, event_dict
from roost.flow.redact import redact
from roost.visualize import ids
from roost.visualize.dot import flow_graph, state_text
from roost.visualize.dot_nodes import counter_rows
from roost.visualize.dot_program import svg_markup
from roost.visualize.run_summary import (
    RunSummary,
    Tokens,
    count,
    counted_node,
    event_targets,
    summarize,
    usage_of,
    visits,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import graphviz

    from roost.flow.models import Flow
    from roost.ports import ImageStore

_PLACEHOLDER = re.compile(r"@@ROOST_(TITLE|HEADING|CSS|SVG|JS|DATA)@@")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SVG_SIZE = re.compile(r'(<svg\b[^>]*?)\s(width|height)="[^"]*"')


def run_page_html(flow: Flow, events: Sequence[Event], images: ImageStore | None = None) -> str:
    """The run page of a run of ``flow`` (or of the bare flow when ``events`` is empty).

    The images its messages carry are read from ``images`` and embedded in the page.
    """
    parts = {
        "TITLE": html.escape(redact(f"{flow.name} · roost run page", flow.secrets)),
        "HEADING": _heading(flow),
        "CSS": _asset("run_page.css"),
        "SVG": inline_svg(flow_graph(flow, events, title=False, mark_final=False, for_page=True)),
        "JS": _asset("event_words.js") + _asset("run_page.js"),  # the serve page's words too
        # Events never hold secrets (the engine keeps them out; run_start has the text as
        # written, placeholders unexpanded), so the data is embedded as recorded.
        "DATA": script_json({**page_data(flow, events), "images": image_urls(events, images)}),
    }
    # One pass, so text from the flow or the run that looks like a placeholder stays text.
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], _asset("run_page.html"))


def inline_svg(graph: graphviz.Digraph) -> str:
    """The drawing of ``graph`` as SVG markup to place inside HTML (no prolog, no comments)."""
    # dot spells every "-" as "&#45;"; the plain character means the same and reads better.
    svg = _COMMENT.sub("", svg_markup(graph)).replace("&#45;", "-")
    for _ in range(2):  # the root element's fixed size would stop the page from scaling it
        svg = _SVG_SIZE.sub(r"\1", svg, count=1)
    return svg


def script_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``</script>``, ``<!--`` or ``&`` can
    appear, and JavaScript's own line separators are escaped."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page_data(flow: Flow, events: Sequence[Event]) -> dict[str, Any]:
    """What the page's script needs: the events, where each happened, and the counts."""
    targets: list[list[Any]] = []
    first_visit: dict[str, int] = {}
    edge_messages: dict[str, list[int]] = {}
    node_tokens: dict[int, int] = {}  # seq of an llm_call -> its node's tokens up to it
    running: dict[str, int] = {}
    for index, event in enumerate(events):
        if isinstance(event, LlmCallEvent):
            running[event.node] = running.get(event.node, 0) + Tokens(*usage_of(event)).total
            node_tokens[event.seq] = running[event.node]
        nodes, edge = event_targets(flow, event)
        targets.append([nodes, edge])
        for name in visits(event):
            first_visit.setdefault(ids.node_id(name), index)
        if isinstance(event, MessageEvent) and edge is not None:
            edge_messages.setdefault(edge, []).append(index)
    for name in [*flow.agents, *flow.channels]:
        first_visit.setdefault(ids.node_id(name), len(events))  # never visited
    final = summarize(flow, events).final
    said, standing = _budgets(flow, events)
    return {
        "counters": node_counters(flow, events),
        "flow": flow.name,
        "events": [event_dict(event) for event in events],
        "targets": targets,
        "firstVisit": first_visit,
        "edgeMessages": edge_messages,
        "nodeTokens": node_tokens,
        "final": {"status": final.status, "node": final.node, "peer": final.peer},
        "budgetWords": said,
        "finalText": redact("\n".join([state_text(final), *standing]), flow.secrets),
        "finalNodeId": ids.node_id(final.node) if final.node is not None else None,
    }


def _budgets(flow: Flow, events: Sequence[Event]) -> tuple[dict[int, str], list[str]]:
    """Each budget decision in words (by seq), and each limit's standing at the run's end:
    the words ``roost show`` uses. Nothing is read for a run without budgets."""
    decisions = [event for event in events if isinstance(event, BudgetEvent)]
    if (
        not decisions
        and flow.budget is None
        and all(a.budget is None for a in flow.agents.values())
    ):
        return {}, []
    from roost.budget_text import budget_lines, budget_words
    from roost.runstate import fold

    return {e.seq: budget_words(e) for e in decisions}, budget_lines(fold(events))


def image_urls(events: Sequence[Event], images: ImageStore | None) -> dict[str, str]:
    """Each image the run's messages carry that ``images`` holds, as a ``data:`` URL by hash."""
    urls: dict[str, str] = {}
    if images is None:
        return urls
    for event in events:
        for image in getattr(event, "images", None) or ():
            if image.hash in urls:
                continue
            data = images.get(image.hash)
            if data is not None:
                encoded = base64.b64encode(data).decode("ascii")
                urls[image.hash] = f"data:{image.media_type};base64,{encoded}"
    return urls


def node_counters(flow: Flow, events: Sequence[Event]) -> dict[str, dict[str, Any]]:
    """Per node id: the rows a run changes, before the run and after each event that changed them.

    ``{"start": rows, "at": [event index, ...], "rows": [rows, ...]}``: at step ``i`` the
    node shows the rows of the last index at or before ``i`` (``start`` before any). The
    last rows are those drawn in the page's SVG, which is how the script finds them.
    """
    counters: dict[str, dict[str, Any]] = {}
    summary = RunSummary()

    def rows(name: str, run: RunSummary | None) -> list[str]:
        return [redact(text, flow.secrets) for text, _ in counter_rows(flow, name, run)]

    for index, event in enumerate(events):
        count(summary, event)
        name = counted_node(event)
        if name is None or flow.node_kind(name) is None:
            continue  # a node this flow does not have is drawn without counts
        node = counters.get(ids.node_id(name))
        if node is None:
            node = counters[ids.node_id(name)] = {"start": rows(name, None), "at": [], "rows": []}
        node["at"].append(index)
        node["rows"].append(rows(name, summary))
    return counters


def _heading(flow: Flow) -> str:
    name = f"<b>{html.escape(redact(flow.name, flow.secrets))}</b>"
    if not flow.description:
        return name
    return f"{name} — {html.escape(redact(flow.description, flow.secrets))}"


def _asset(name: str) -> str:
    return resources.files("roost.visualize").joinpath(name).read_text(encoding="utf-8")
