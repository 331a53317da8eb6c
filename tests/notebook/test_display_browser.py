"""The run page a notebook shows for a run, played in a real browser."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from roost.flow import load_flow_text
from roost.notebook import show
from roost.ports import MemoryLog
from tests.notebook.conftest import FLOW, run_picnic

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def test_the_inline_replay_page_plays_in_a_browser(browser: Browser) -> None:
    log = MemoryLog("picnic-6")
    # Playwright's loop runs in this thread, so the run gets a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        events = pool.submit(run_picnic, load_flow_text(FLOW, "picnic.yaml"), log).result()
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.set_content(f"<!doctype html><html><body>{show(log)._repr_html_()}</body></html>")
        frame = page.frames[1]
        frame.wait_for_selector("#counter")
        counter: Any = frame.evaluate("document.getElementById('counter').textContent")
        assert counter == f"1 / {len(events)}"
        frame.click("#last")
        assert frame.evaluate("document.getElementById('counter').textContent") == (
            f"{len(events)} / {len(events)}"
        )
        assert "Perfect, thanks!" in frame.inner_text("body")
    finally:
        page.close()
    assert errors == []
