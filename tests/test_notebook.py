"""A flow and a run as a notebook shows them: the graph, the run page inline."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from IPython.core.formatters import DisplayFormatter

import roost
from roost.errors import EventLogError, UsageError
from roost.flow import Flow, load_flow_text
from roost.notebook import FlowDrawing, RunDrawing, load_ipython_extension, register, show
from roost.ports import MemoryLog
from roost.store.jsonl import JsonlLog
from roost.visualize import run_page_html
from tests.notebook.conftest import FLOW, run_picnic
from tests.notebook.drawings import NODES, node_titles

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def flow() -> Flow:
    return load_flow_text(FLOW, "picnic.yaml")


class _Frames(HTMLParser):
    """The frames of an HTML fragment, as (srcdoc, title) pairs, entities decoded."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "iframe":
            self.frames.append(dict(attrs))


def _frames(fragment: str) -> list[dict[str, str | None]]:
    parser = _Frames()
    parser.feed(fragment)
    return parser.frames


def test_a_flow_shows_as_its_graph(flow: Flow) -> None:
    drawing = show(flow)
    assert isinstance(drawing, FlowDrawing)
    svg = drawing._repr_svg_()
    assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert node_titles(svg) >= NODES


def test_a_run_shows_its_replay_page_in_a_frame_of_its_own(flow: Flow) -> None:
    log = MemoryLog("picnic-1")
    events = run_picnic(flow, log)
    drawing = show(log)
    assert isinstance(drawing, RunDrawing)
    (frame,) = _frames(drawing._repr_html_())
    assert frame["srcdoc"] == run_page_html(flow, events)
    assert frame["title"] == "replay of picnic"


def test_a_runner_shows_the_same_run_as_its_log(flow: Flow) -> None:
    log = MemoryLog("picnic-2")
    run_picnic(flow, log)
    runner = roost.Runner(flow=flow, log=log)
    by_runner, by_log = show(runner), show(log)
    assert isinstance(by_runner, RunDrawing) and isinstance(by_log, RunDrawing)
    assert by_runner._repr_html_() == by_log._repr_html_()


def test_a_stored_run_is_drawn_under_the_flow_it_recorded(flow: Flow, tmp_path: Path) -> None:
    events = run_picnic(flow, JsonlLog(tmp_path / "run.jsonl", "picnic-3"))
    # Read back as a person would, from the file alone: the flow comes from its events.
    drawing = show(JsonlLog(tmp_path / "run.jsonl", "picnic-3"))
    assert isinstance(drawing, RunDrawing)
    assert drawing.flow.name == "picnic" and drawing.events == events
    svg = drawing._repr_svg_()
    assert node_titles(svg) >= NODES
    assert svg != show(flow)._repr_svg_()  # the run's counts are drawn over the flow


def test_a_list_of_events_shows_as_its_run(flow: Flow) -> None:
    events = run_picnic(flow, MemoryLog("picnic-4"))
    drawing = show(events)
    assert isinstance(drawing, RunDrawing) and drawing.events == events


def test_anything_else_is_refused_in_one_line_naming_its_type() -> None:
    with pytest.raises(UsageError) as caught:
        show(42)
    assert str(caught.value) == (
        "roost.show draws a Flow, a Runner, a log or a run's events, not int"
    )


def test_a_log_without_a_run_is_refused_in_one_line() -> None:
    with pytest.raises(EventLogError) as caught:
        show(MemoryLog("empty-1"))
    assert str(caught.value) == ("empty-1: the run has no run_start event, so no flow to draw")


def test_ipython_displays_flows_and_runs_without_roost_show(flow: Flow) -> None:
    formatter = DisplayFormatter()
    register(SimpleNamespace(display_formatter=formatter))
    data, _ = formatter.format(flow)
    assert data["image/svg+xml"] == show(flow)._repr_svg_()
    log = MemoryLog("picnic-5")
    run_picnic(flow, log)
    data, _ = formatter.format(log)
    assert data["text/html"] == show(log)._repr_html_()
    assert data["image/svg+xml"] == show(log)._repr_svg_()


def test_load_ext_turns_the_displays_on(flow: Flow) -> None:
    formatter = DisplayFormatter()
    assert "image/svg+xml" not in formatter.format(flow)[0]
    load_ipython_extension(SimpleNamespace(display_formatter=formatter))
    assert formatter.format(flow)[0]["image/svg+xml"] == show(flow)._repr_svg_()


def test_a_log_with_no_run_yet_displays_as_plain_text() -> None:
    formatter = DisplayFormatter()
    register(SimpleNamespace(display_formatter=formatter))
    data, _ = formatter.format(MemoryLog("empty-2"))
    assert set(data) == {"text/plain"}


def test_importing_roost_outside_ipython_loads_no_notebook_code() -> None:
    script = "import json, sys, roost; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    loaded = set(json.loads(done.stdout))
    assert {"roost.notebook", "IPython"} & loaded == set()
