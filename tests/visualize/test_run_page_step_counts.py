"""The run page in Chromium: the graph's counts follow the slider, and its text is legible.

Each node's tokens, model calls, tool calls and a director's choices must be those
made by the step the slider is at, not the run's final totals; and at "fit" the
drawing is as large as the page allows, with no text too small to read.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from roost import load_flow
from roost.engine import Runner
from roost.events import Event, LlmCallEvent, SelectEvent, ToolCallEvent
from roost.ports import MemoryLog
from tests.fakes.run_page import Opened, open_page
from tests.visualize import flows
from tests.visualize.conftest import long_run

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page

    from roost.flow.models import Flow

ROOT = Path(__file__).resolve().parents[2]
# The smallest text a person reads without leaning in, and the largest that is not shouting.
LEGIBLE_PX = 11
LARGEST_PX = 24


def step_to(page: Page, index: int) -> None:
    page.evaluate(
        """(i) => { const s = document.getElementById('slider'); s.value = String(i);
        s.dispatchEvent(new Event('input')); }""",
        index,
    )


def node_text(page: Page, node_id: str) -> list[str]:
    """The lines of text a node shows now."""
    texts: list[str] = page.evaluate(
        """(id) => [...document.getElementById(id).querySelectorAll('text')]
        .map((t) => t.textContent.trim()).filter((t) => t)""",
        node_id,
    )
    return texts


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def director_lines(events: list[Event], channel: str) -> list[str]:
    """What the director's node should say about the events so far, worked out from them."""
    choices = sum(1 for e in events if isinstance(e, SelectEvent) and e.channel == channel)
    calls = sum(1 for e in events if isinstance(e, LlmCallEvent) and e.node == channel)
    return ([plural(choices, "choice")] if choices else []) + (
        [plural(calls, "model call")] if calls else []
    )


def shown_counts(lines: list[str]) -> list[str]:
    """The counts among a node's lines: 'N choices' and 'N model calls'."""
    found = []
    for line in lines:
        found += re.findall(r"\d+ choices?|\d+ model calls?", line)
    return found


@pytest.fixture
def team_page(browser: Browser, tmp_path: Path) -> Iterator[Opened]:
    yield from open_page(browser, tmp_path / "team.html", flows.load("team.yaml"), flows.team_run())


def test_director_and_agent_counts_are_those_made_by_the_current_step(team_page: Opened) -> None:
    page, events = team_page.page, flows.team_run()
    for index in range(len(events)):
        step_to(page, index)
        so_far = events[: index + 1]
        assert shown_counts(node_text(page, "node-team")) == director_lines(so_far, "team")
        mathematician = node_text(page, "node-mathematician")
        calls = sum(1 for e in so_far if isinstance(e, LlmCallEvent) and e.node == "mathematician")
        tokens = sum(
            e.usage.prompt_tokens + e.usage.completion_tokens
            for e in so_far
            if isinstance(e, LlmCallEvent) and e.node == "mathematician" and e.usage
        )
        adds = sum(1 for e in so_far if isinstance(e, ToolCallEvent) and e.name == "math__add")
        joined = " ".join(mathematician)
        if calls:
            assert f"{tokens} tokens" in joined and plural(calls, "model call") in joined
        else:
            assert "tokens" not in joined and "model call" not in joined
        assert ("math#add ×1" in joined) == (adds == 1) and "math#add" in joined
    assert team_page.errors == [] and team_page.foreign_requests() == []


def test_step_twelve_of_a_long_run_shows_the_choices_made_by_step_twelve(
    browser: Browser, tmp_path: Path
) -> None:
    events = long_run(120)
    for opened in open_page(browser, tmp_path / "long.html", flows.load("team.yaml"), events):
        page = opened.page
        for index in (12, 40, 0, len(events) - 1, 12):
            step_to(page, index)
            expected = director_lines(events[: index + 1], "team")
            assert shown_counts(node_text(page, "node-team")) == expected
        step_to(page, 12)
        assert node_text(page, "node-team").count("3 choices") == 1  # three rounds by step 12
        assert opened.errors == []


def real_run(name: str) -> tuple[Flow, list[Event]]:
    """A run of one of the example flows, made by the engine (scripted providers)."""
    flow = load_flow(ROOT / "flows" / name)
    log = MemoryLog("run")
    # Playwright's own event loop runs in this thread: the run gets a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, Runner(flow=flow, log=log).start()).result()
    return flow, log.load()


def drawing_metrics(page: Page) -> dict[str, float]:
    """Rendered text sizes in pixels, and how much of the graph's pane the drawing covers."""
    metrics: dict[str, float] = page.evaluate(
        """() => {
        const svg = document.querySelector('#drawing svg');
        const sizes = [...svg.querySelectorAll('text')]
          .filter((t) => t.textContent.trim())
          .map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
        const pane = document.getElementById('drawing');
        const drawn = svg.getBoundingClientRect();
        const covered = Math.min(1, drawn.width / pane.clientWidth) *
          Math.min(1, drawn.height / pane.clientHeight);
        return {smallest: Math.min(...sizes), largest: Math.max(...sizes), covered: covered,
                graphWidth: document.getElementById('graph').getBoundingClientRect().width};
      }"""
    )
    return metrics


PAGES = {
    "team": lambda: (flows.load("team.yaml"), flows.team_run()),
    "math-chat": lambda: real_run("math-chat.yaml"),
    "content-team": lambda: real_run("content-team.yaml"),
    "thirty agents": lambda: (flows.big_flow(30), []),
}


@pytest.mark.parametrize("viewport", [(1100, 700), (1440, 900), (800, 600)])
@pytest.mark.parametrize("name", list(PAGES))
def test_at_fit_the_text_is_legible_and_the_drawing_fills_its_pane(
    browser: Browser, tmp_path: Path, name: str, viewport: tuple[int, int]
) -> None:
    flow, events = PAGES[name]()
    for opened in open_page(browser, tmp_path / "page.html", flow, events):
        page = opened.page
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        page.wait_for_function("document.getElementById('fit').textContent === '1:1'")
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
        shown = drawing_metrics(page)
        assert shown["smallest"] >= LEGIBLE_PX - 0.01, shown
        assert shown["largest"] <= LARGEST_PX + 0.01, shown
        # No empty half: the drawing covers most of its pane (or overflows it and scrolls).
        assert shown["covered"] >= 0.6, shown
        # The transcript keeps a readable width beside the graph.
        assert viewport[0] - shown["graphWidth"] >= 280 or shown["graphWidth"] == viewport[0]
        page.click("#fit")  # 1:1, the drawing at its natural size, then fitted again
        page.click("#fit")
        assert drawing_metrics(page) == shown
        assert opened.errors == [] and opened.foreign_requests() == []
