"""Text that means something to DOT, Graphviz or HTML is drawn as written and injects nothing.

Names, roles, descriptions and messages below hold quotes, backslashes, angle
brackets, braces, newlines, Graphviz's own escapes (``\\N`` is a node's name,
``\\G`` the graph's) and markup. The real ``dot`` must read the DOT text, and
the SVG it writes must hold that text as text: no element or attribute of it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import TYPE_CHECKING

from roost.flow.models import Flow
from roost.visualize import ids, run_page_html, write_render
from tests.visualize import flows
from tests.visualize.graphs import SVG, svg_texts

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event

XLINK = "{http://www.w3.org/1999/xlink}"
ANA = 'ana "the" <script>alert(1)</script>'
BOB = "bob\\N \\G\\"
ROOM = "room}; x -> y [label=<b>z</b>]"
ROLE = 'says "\\N", \\\\G & &amp; <b>bold</b>\nand a second line \\l \\E'
DESCRIPTION = "<img src=x onerror=alert(1)> ]]> --> \\"
MESSAGE = "</script><script>alert(2)</script> \\N\n<!-- & -->"
# Everything Graphviz writes into an SVG drawing: any other element was injected.
SVG_ELEMENTS = {"svg", "g", "title", "a", "polygon", "polyline", "path", "ellipse", "text"}


def hostile_flow() -> Flow:
    return Flow.model_validate(
        {
            "roost": 1,
            "name": 'flow "<x>" \\N',
            "description": DESCRIPTION,
            "agents": {
                ANA: {"role": ROLE, "functions": ["<tool>\\N"]},
                BOB: {"description": DESCRIPTION},
                "USER": {"interrupt": "ALWAYS"},
            },
            "channels": {ROOM: {"members": [ANA, BOB], "description": ROLE}},
            "start": {"from": "USER", "to": ANA, "content": MESSAGE},
        }
    )


def hostile_run() -> list[Event]:
    return flows.Log().message(ANA, BOB, MESSAGE).message(BOB, "USER", MESSAGE).events


def tooltips(svg: bytes) -> dict[str, str]:
    """Each element id's hover text, as a browser reads it from the ``<a xlink:title>``."""
    found = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        for link in group.findall(f"{SVG}a"):
            if f"{XLINK}title" in link.attrib:
                found[group.attrib["id"].removeprefix("a_")] = link.attrib[f"{XLINK}title"]
    return found


def test_dot_reads_it_and_the_svg_holds_no_injected_markup(tmp_path: Path) -> None:
    svg = write_render(hostile_flow(), hostile_run(), tmp_path / "hostile.svg").read_bytes()
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    tags = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert tags <= SVG_ELEMENTS, tags - SVG_ELEMENTS
    for element in root.iter():
        assert not any(name.lower().startswith("on") for name in element.attrib)
    texts = svg_texts(svg)
    assert texts[ids.node_id(ANA)].startswith(ANA)
    assert texts[ids.node_id(BOB)].startswith(BOB)
    assert "channel " + ROOM in texts["cluster-" + ids.slug(ROOM)]
    assert "<tool>\\N" in texts[ids.node_id(ANA)]


def test_tooltips_show_the_text_as_written(tmp_path: Path) -> None:
    # Graphviz reads a tooltip twice (escapes and entities, then \N and \G): one level
    # of escaping would show "\N" as the node's id and "&amp;" as "&".
    svg = write_render(hostile_flow(), hostile_run(), tmp_path / "hostile.svg").read_bytes()
    shown = tooltips(svg)
    assert shown[ids.node_id(ANA)] == ROLE
    assert shown[ids.node_id(BOB)] == DESCRIPTION
    assert shown[ids.node_id(ROOM)] == ROLE
    assert shown[ids.member_edge_id(ROOM, BOB)] == f"{BOB} is a member of {ROOM}"
    assert shown[ids.message_edge_id(BOB, "USER")] == f"{BOB} -> USER: 1 message"
    assert shown["flow"] == 'flow "<x>" \\N'


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


def test_the_replay_page_holds_only_its_own_elements() -> None:
    page = _Tags()
    page.feed(run_page_html(hostile_flow(), hostile_run()))
    plain = _Tags()
    plain.feed(run_page_html(flows.load("two.yaml"), flows.two_run()))
    assert page.tags.count("script") == plain.tags.count("script") == 2
    assert page.tags.count("b") == plain.tags.count("b")  # the heading's, no more
    assert set(page.tags) - SVG_ELEMENTS <= set(plain.tags) and "img" not in page.tags
    assert page.handlers == plain.handlers
