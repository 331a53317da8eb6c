"""Element ids shared by the DOT text and the run page: the page finds what its data names."""

from __future__ import annotations

import re

from roost.visualize import run_page_html
from roost.visualize.run_page import page_data
from tests.visualize import flows


def test_svg_ids_match_the_page_data() -> None:
    flow, events = flows.load("team.yaml"), flows.team_run()
    page = run_page_html(flow, events)
    data = page_data(flow, events)
    wanted = {edge for _nodes, edge in data["targets"] if edge}
    wanted |= {node for nodes, _edge in data["targets"] for node in nodes}
    present = set(re.findall(r'<g id="([^"]+)"', page))
    assert wanted <= present, wanted - present
