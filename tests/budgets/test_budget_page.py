"""The run page of a run a budget stopped says what the budget decided and where it stands."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.ports import MemoryLog
from roost.visualize import run_page_html
from tests.budgets.conftest import looping_flow
from tests.visualize.conftest import browser  # noqa: F401  (the Chromium fixture)

if TYPE_CHECKING:
    from pathlib import Path

    from fakes.llm_server import FakeLLMServer
    from playwright.sync_api import Browser


def test_the_page_words_the_decision_and_shows_each_limit_at_the_end(
    browser: Browser,  # noqa: F811
    server: FakeLLMServer,
    tmp_path: Path,
) -> None:
    flow = looping_flow(server, "{cost: 0.5}")
    log = MemoryLog("r")
    # In a thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, Runner(flow=flow, log=log).start()).result()
    events = log.load()
    decision = next(e for e in events if e.type == "budget")
    assert decision.action == "stop"
    page_file = tmp_path / "run.html"
    page_file.write_text(run_page_html(flow, events), encoding="utf-8")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_file.resolve().as_uri())
    rows = page.locator(".ev.budget")
    assert rows.count() == 1
    said = rows.first.locator(".body").text_content() or ""
    assert said.startswith("budget: $0.") and " of $0.50 spent; the next would add $0." in said
    assert said.endswith("; the run stops")
    page.keyboard.press("End")
    standing = page.locator("#run-state").text_content() or ""
    assert "budget: cost $0." in standing and "of $0.50 spent" in standing
    assert standing.rstrip().endswith(", stopped the run")
    assert errors == []
    page.close()
