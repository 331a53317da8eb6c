"""DOT and HTML injection: hostile names, roles and messages in drawings and the run page.

Each payload is planted everywhere a flow or a run puts text into a drawing:
an agent's name and role, a channel's name and description, a message, a
tool call's name and arguments, a model's answer, an error entry, a node the
run names but the flow lacks. The real ``dot`` must parse the DOT text into
the same graph a harmless twin gives (no node, edge or attribute injected),
the SVG must hold no script, event handler or link, every text must be drawn
as written, and headless Chromium must run none of the page's injected code
while showing it all as text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from roost.events import Event, parse_event
from roost.flow import load_flow_text
from roost.visualize import flow_to_dot, run_page_html
from roost.visualize.ids import node_id, slug
from tests.visualize.conftest import browser
from tests.visualize.graphs import SVG, laid_out, rendered, svg_texts

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser, Dialog, Route

    from roost.flow.models import Flow
    from tests.attacks.conftest import Cli

# Each sets window.pwned (or calls alert) if it ever runs as code.
PAYLOADS = [
    '<script>window.pwned = "script"</script>',
    '</script><script>window.pwned = "closed"</script>',
    "<img src=x onerror=\"window.pwned = 'img'\">",
    "<svg onload=\"window.pwned = 'svg'\"><script>alert(1)</script></svg>",
    '<iframe srcdoc="<script>parent.pwned=1</script>"></iframe>',
    '<a href="javascript:window.pwned=1">click</a>',
    "javascript:window.pwned=1",
    "<!-- an open comment",
    "--> a closed comment <!--",
    "]]> <![CDATA[ <script>window.pwned=1</script> ]]>",
    "&lt;script&gt;window.pwned=1&lt;/script&gt; &amp;amp; &#60;b&#62; &nbsp;",
    '"; injected -> node [label="x"]; "',
    "\\N \\G \\L \\E \\T \\H \\l \\r \\n",
    "<<B>bold</B>>",
    "<TABLE><TR><TD>cell</TD></TR></TABLE>",
    "} subgraph cluster_evil { evil } {",
    ']; node [shape=box, URL="javascript:window.pwned=1"',
    "line one\nline two\r\nline three\rfour",
    "@@ROOST_JS@@ @@ROOST_SVG@@ @@ROOST_DATA@@",
    "\u2028\u2029 separators \x1b[31m escape \x07 bell",
    'it\'s "quoted" and \\ backslashed \\\\ twice',
    "<style>*{display:none}</style><link rel=stylesheet href=http://10.0.0.1/x.css>",
]
PLAIN = "plain words"

__all__ = ["browser"]  # the fixture, a headless Chromium per module


def hostile(text: str) -> tuple[Flow, list[Event]]:
    """A flow and a run with ``text`` in every place that reaches a drawing."""
    person, bot, room = text, f"bot {text}", f"room {text}"
    spec = {
        "roost": 1,
        "name": f"flow {text}",
        "description": f"about {text}",
        "defaults": {"provider": "p"},
        "providers": {"p": {"kind": "scripted", "replies": ["x"]}},
        "agents": {
            person: {"interrupt": "ALWAYS", "role": text},
            bot: {"role": f"You are {text}.", "description": text},
        },
        "channels": {room: {"members": [person, bot], "description": text}},
        "start": {"from": person, "to": room, "content": text},
    }
    flow = load_flow_text(yaml.safe_dump(spec, allow_unicode=True), "hostile.yaml")
    record = {"path": "hostile.yaml", "name": flow.name, "hash": "sha256:0", "text": ""}
    rows: list[dict[str, Any]] = [
        {"type": "run_start", "flow": record},
        {"type": "message", "from": person, "to": room, "content": text},
        {"type": "select", "channel": room, "candidates": [bot], "chosen": bot, "by": "llm"},
        {"type": "llm_call", "node": bot, "provider": "p", "model": text,
         "request_digest": "sha256:0", "response": {"text": text}, "usage": {"calls": 1}},
        {"type": "tool_call", "agent": bot, "id": text, "name": text, "arguments": {text: text}},
        {"type": "tool_result", "agent": bot, "id": text, "name": text, "content": text},
        {"type": "message", "from": bot, "to": room, "content": text},
        {"type": "message", "from": f"ghost {text}", "to": bot, "content": text},
        {"type": "error", "from": bot, "to": room, "content": text},
    ]  # fmt: skip
    stamp = {"run": "run-hostile", "ts": "2026-01-01T00:00:00Z"}
    return flow, [parse_event({**row, **stamp, "seq": seq}) for seq, row in enumerate(rows)]


def squashed(text: str) -> str:
    """``text`` as a drawing shows it: no control characters, no white space."""
    return "".join(re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "", text).split())


XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"
SAFE_SVG_ELEMENTS = {"svg", "g", "title", "text", "path", "polygon", "polyline", "ellipse", "a"}


def assert_inert(svg: bytes) -> None:
    """Nothing in ``svg`` that a browser would run, load or follow (a title is only text)."""
    root = ET.fromstring(svg)
    for element in root.iter():
        assert element.tag.removeprefix(SVG) in SAFE_SVG_ELEMENTS, element.tag
        for name, value in element.attrib.items():
            assert not name.rpartition("}")[2].lower().startswith("on"), name
            assert not name.endswith("href"), (name, value)


@pytest.mark.parametrize("text", PAYLOADS)
def test_hostile_text_draws_as_text_and_injects_nothing(text: str) -> None:
    flow, events = hostile(text)
    source = flow_to_dot(flow, events)
    graph, twin = laid_out(source), laid_out(flow_to_dot(*hostile(PLAIN)))
    twin_ids = [name.replace(slug(PLAIN), slug(text)) for name in twin.nodes]
    assert sorted(graph.nodes) == sorted(twin_ids)
    assert len(graph.edges) == len(twin.edges) and len(graph.clusters) == len(twin.clusters)
    svg = rendered(source, "svg")
    assert_inert(svg)
    drawn = {key: squashed(value) for key, value in svg_texts(svg).items()}
    for name in (text, f"bot {text}", f"room {text}", f"ghost {text}"):
        assert squashed(name)[:30] in drawn[node_id(name)], name
    # Hover texts and the title hold the text as written, entities and escapes included.
    titles = tooltips(svg)
    assert titles[node_id(text)] == squashed(text)  # the person's role
    assert titles[node_id(f"bot {text}")] == squashed(text)  # the bot's description


def tooltips(svg: bytes) -> dict[str, str]:
    """The hover text of each node, by the node's id."""
    found = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        link = group.find(f"{SVG}a")
        if group.get("id", "").startswith("a_node-") and link is not None:
            found[group.get("id", "").removeprefix("a_")] = squashed(link.get(XLINK_TITLE, ""))
    return found


def test_a_run_file_with_hostile_names_renders_to_dot_that_dot_reads(
    cli: Cli, tmp_path: Path
) -> None:
    # Names from a run file someone else wrote reach the drawing as ghosts of the flow.
    text = PAYLOADS[11]
    _, events = hostile(text)
    lines = [event.model_dump_json(by_alias=True) + "\n" for event in events]
    (tmp_path / "run.jsonl").write_text("".join(lines))
    (tmp_path / "plain.yaml").write_text(PLAIN_FLOW)
    for out in ("run.dot", "run.svg"):
        said = cli("render", "plain.yaml", "--run", "run.jsonl", "-o", out)
        assert (said.code, said.lines) == (0, [])
    graph = laid_out((tmp_path / "run.dot").read_text())
    ghosts = [name for name in graph.nodes if name.startswith("node-") and name != "node-a"]
    named = (text, f"bot {text}", f"room {text}", f"ghost {text}")
    assert sorted(ghosts) == sorted(node_id(name) for name in named)  # and no other node
    assert_inert((tmp_path / "run.svg").read_bytes())


PLAIN_FLOW = """\
roost: 1
name: plain
providers: {p: {kind: scripted, replies: [x]}}
agents: {a: {provider: p}}
"""


SHOWN = """() => ({
    pwned: window.pwned === undefined ? null : String(window.pwned),
    bodies: [...document.querySelectorAll('.ev .body')].map(e => e.textContent),
    heads: [...document.querySelectorAll('.ev')].map(e => e.textContent),
    heading: document.querySelector('h1, header, .head') ?
        document.querySelector('h1, header, .head').textContent : '',
    scripts: document.scripts.length,
    foreign: document.querySelectorAll('img, iframe, link, style:not(head style), object, embed,'
        + ' [onerror], [onload], [onclick], svg script, a[href]').length,
})"""


@pytest.mark.parametrize("text", PAYLOADS)
def test_the_replay_page_runs_no_injected_code_and_shows_it_as_text(
    browser: Browser, tmp_path: Path, text: str
) -> None:
    flow, events = hostile(text)
    path = tmp_path / "page.html"
    path.write_text(run_page_html(flow, events), encoding="utf-8")
    page = browser.new_page()
    url = path.resolve().as_uri()
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))

    def alerted(dialog: Dialog) -> None:
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def only_the_page(route: Route) -> None:
        route.continue_() if route.request.url == url else route.abort()

    page.on("dialog", alerted)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
    page.route("**/*", only_the_page)
    try:
        page.goto(url)
        for _ in events:  # every event shown in turn, its callout and highlights drawn
            page.keyboard.press("ArrowRight")
            page.mouse.move(300, 200)
        shown = page.evaluate(SHOWN)
    finally:
        page.close()
    assert shown["pwned"] is None and problems == []
    assert requests == [url]
    assert shown["scripts"] == 2 and shown["foreign"] == 0
    visible = squashed(text)
    bodies = [squashed(body) for body in shown["bodies"]]
    assert bodies.count(visible) >= 4, bodies  # two messages, the tool result, the error
