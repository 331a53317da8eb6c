"""The run page's text: self-contained, safely escaped, with the data its script needs."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from roost.visualize import run_page_html
from roost.visualize.ids import node_id
from roost.visualize.run_page import page_data, script_json
from tests.visualize import flows


class _Resources(HTMLParser):
    """Collects every URL-bearing attribute and the tags, to prove nothing is loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "xlink:href", "action", "data") and value:
                self.urls.append(value)


def test_script_json_cannot_close_the_script_element() -> None:
    data = {"text": "</script><script>alert(1)</script><!-- & \u2028 \u2029", "n": 1}
    text = script_json(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == data


def test_page_is_self_contained() -> None:
    page = run_page_html(flows.load("team.yaml"), flows.team_run())
    parser = _Resources()
    parser.feed(page)
    assert parser.urls == []  # no script, style, image or link is fetched
    assert parser.tags.count("script") == 2 and "svg" in parser.tags
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # Exactly one closing script tag per script element: the data cannot end one early.
    assert page.lower().count("</script") == 2
    assert not re.search(r"@@ROOST_[A-Z]+@@", page)
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page


def test_placeholders_in_user_text_stay_text() -> None:
    events = flows.Log().message("USER", "assistant", "@@ROOST_JS@@ and @@ROOST_SVG@@").events
    page = run_page_html(flows.load("two.yaml"), events)
    data = re.search(r'id="roost-data">(.*?)</script>', page, re.DOTALL)
    assert data is not None
    assert json.loads(data.group(1))["events"][0]["content"] == "@@ROOST_JS@@ and @@ROOST_SVG@@"
    assert page.count("function describe(") == 1


def test_page_data_maps_events_to_graph_elements() -> None:
    flow, events = flows.load("team.yaml"), flows.team_run()
    data = page_data(flow, events)
    assert len(data["targets"]) == len(events)
    first_message = data["targets"][1]
    assert first_message == [["node-USER", "node-team"], "member-team-USER"]
    assert data["edgeMessages"]["member-team-mathematician"] == [
        i
        for i, e in enumerate(events)
        if e.type == "message" and e.from_ == "mathematician"  # type: ignore[union-attr]
    ]
    assert data["firstVisit"]["node-USER"] == 1
    assert data["firstVisit"]["node-reviewer"] == 9  # chosen by the director at event 9
    writer = node_id('writer "quoted" <b>&{x}')
    assert data["firstVisit"][writer] == len(events)  # never visited
    assert data["final"] == {"status": "terminated", "node": "team", "peer": None}
    assert data["finalNodeId"] == "node-team"
