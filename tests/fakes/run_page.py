"""The run page as tests open it in Chromium and read what it shows.

The visualize tests and the tests of imported runs both step through run pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.visualize import run_page_html

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page

    from roost.events import Event
    from roost.flow.models import Flow


@dataclass
class Opened:
    """A page opened from disk, with everything it tried to fetch and every console error."""

    page: Page
    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def foreign_requests(self) -> list[str]:
        return [url for url in self.requests if url != self.url]


def open_page(browser: Browser, path: Path, flow: Flow, events: list[Event]) -> Iterator[Opened]:
    path.write_text(run_page_html(flow, events), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1100, "height": 700})
    opened = Opened(page, path.resolve().as_uri())
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("console", lambda msg: opened.errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda error: opened.errors.append(str(error)))
    # Anything but the file itself is refused, so a leak would also show as a failure.
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url == opened.url else route.abort(),
    )
    page.goto(opened.url)
    yield opened
    page.close()


def state(page: Page) -> dict[str, Any]:
    """What the page shows now: counter, current transcript row, highlighted ids, caption."""
    shown: dict[str, Any] = page.evaluate(
        """async () => {
        await new Promise((done) => requestAnimationFrame(() => done()));
        return {
        counter: document.getElementById('counter').textContent,
        current: [...document.querySelectorAll('.ev.current')].map(e => e.id),
        body: (document.querySelector('.ev.current .body') || {}).textContent,
        edges: [...document.querySelectorAll('g.edge.hl')].map(e => e.id),
        nodes: [...document.querySelectorAll('g.node.hl')].map(e => e.id).sort(),
        now: document.getElementById('now').textContent,
        callout: (document.getElementById('callout') || {}).textContent || null,
        future: document.querySelectorAll('.ev.future').length,
        stateShown: !document.getElementById('run-state').classList.contains('hidden'),
        ended: [...document.querySelectorAll('g.node[class*="final-"]')].map(e => e.id),
      }}"""
    )
    return shown
