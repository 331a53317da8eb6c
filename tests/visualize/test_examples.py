"""Every example flow in flows/ renders in every format (the acceptance bar for roost render)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from roost import load_flow
from roost.visualize import flow_to_dot, write_render
from roost.visualize.ids import node_id
from roost.visualize.output import FORMATS
from tests.visualize.graphs import laid_out, svg_texts

ROOT = Path(__file__).resolve().parents[2]


def example_flows() -> list[Path]:
    """The YAML files under flows/ that are roost flows (they carry a ``roost:`` version)."""
    found = []
    for path in sorted((ROOT / "flows").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "roost" in data:
            found.append(path)
    return found


def test_there_are_examples() -> None:
    assert len(example_flows()) >= 2


@pytest.mark.parametrize("path", example_flows(), ids=lambda p: p.stem)
def test_example_renders_in_every_format(path: Path, tmp_path: Path) -> None:
    flow = load_flow(path)
    graph = laid_out(flow_to_dot(flow))
    assert {node_id(name) for name in [*flow.agents, *flow.channels]} <= set(graph.nodes)
    for suffix in FORMATS:
        out = write_render(flow, None, tmp_path / f"{path.stem}{suffix}")
        assert out.stat().st_size > 200, suffix


def test_tool_kinds_are_named_on_their_agent(tmp_path: Path) -> None:
    flow = load_flow(ROOT / "flows" / "tools" / "tools.yaml")
    svg = write_render(flow, None, tmp_path / "tools.svg")
    text = svg_texts(svg.read_bytes())["node-researcher"]
    assert "math#add, units#convert (mcp)" in text and "summarize (flow)" in text
