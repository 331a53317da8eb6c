"""Writing every format with the real ``dot`` program, and failing clearly without it."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from roost.errors import UsageError
from roost.visualize import flow_to_dot
from roost.visualize.output import output_format, write_render
from tests.visualize import flows
from tests.visualize.graphs import SVG, non_background_share, png_pixels, svg_texts


def test_dot_file_is_the_dot_text(tmp_path: Path) -> None:
    flow = flows.load("team.yaml")
    out = write_render(flow, None, tmp_path / "team.dot")
    assert out.read_text(encoding="utf-8") == flow_to_dot(flow)


def test_svg_file_is_svg_with_every_node(tmp_path: Path) -> None:
    flow, events = flows.load("team.yaml"), flows.team_run()
    out = write_render(flow, events, tmp_path / "team.svg")
    root = ET.fromstring(out.read_bytes())
    assert root.tag == f"{SVG}svg"
    texts = svg_texts(out.read_bytes())
    assert "2 msgs" in texts["member-team-mathematician"]
    assert "terminated at team" in texts["run-state"]


def test_png_file_is_a_picture_with_content(tmp_path: Path) -> None:
    out = write_render(flows.load("two.yaml"), flows.two_run(), tmp_path / "two.PNG")
    width, height, _rows = png_pixels(out.read_bytes())
    assert width > 200 and height > 150
    assert 0.02 < non_background_share(out.read_bytes()) < 0.9


def test_pdf_file_is_a_pdf(tmp_path: Path) -> None:
    out = write_render(flows.load("team.yaml"), None, tmp_path / "team.pdf")
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and b"%%EOF" in data[-1024:]


def test_html_file_is_a_self_contained_page(tmp_path: Path) -> None:
    out = write_render(flows.load("team.yaml"), flows.team_run(), tmp_path / "run.html")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert 'id="member-team-mathematician"' in page


@pytest.mark.parametrize("name", ["flow.jpg", "flow", "flow.svg.txt", "flow.htm"])
def test_unsupported_suffix_is_a_usage_error(name: str) -> None:
    with pytest.raises(UsageError) as caught:
        output_format(Path(name))
    assert caught.value.exit_code == 2
    assert "\n" not in str(caught.value) and ".svg" in str(caught.value)


LOADS_GRAPHVIZ = """
import sys
import roost.cli, roost.visualize, roost.visualize.output
before = "graphviz" in sys.modules
from roost.flow import load_flow_text
from roost.visualize import flow_to_dot
flow_to_dot(load_flow_text("roost: 1\\nname: n\\nagents: {a: {interrupt: ALWAYS}}\\n", "n.yaml"))
print(before, "graphviz" in sys.modules)
"""


def test_graphviz_is_loaded_only_to_draw() -> None:
    # A fresh interpreter: this one has long imported graphviz.
    done = subprocess.run(
        [sys.executable, "-c", LOADS_GRAPHVIZ], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "True"]
