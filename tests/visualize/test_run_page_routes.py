"""The run page in a real browser shows a structured reply's fields and the route taken."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from roost import load_flow
from roost.engine import Runner
from roost.ports import MemoryLog
from roost.visualize import run_page_html

if TYPE_CHECKING:
    from playwright.sync_api import Browser

EXAMPLE = Path(__file__).resolve().parents[2] / "flows" / "review_loop.yaml"


def test_a_verdict_reads_as_its_fields_and_each_routed_step_names_its_route(
    browser: Browser, tmp_path: Path
) -> None:
    flow = load_flow(EXAMPLE)
    log = MemoryLog("r")
    runner = Runner(flow=flow, log=log)

    async def signed_off() -> None:
        await runner.start()
        await runner.continue_("Signed off.")

    # In a thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, signed_off()).result()
    events = log.load()
    page_file = tmp_path / "review.html"
    page_file.write_text(run_page_html(flow, events), encoding="utf-8")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_file.resolve().as_uri())
    bodies = page.evaluate(
        "[...document.querySelectorAll('.ev')].map(r => r.querySelector('.body').textContent)"
    )
    by_seq = {event.seq: bodies[index] for index, event in enumerate(events)}
    verdict = next(e for e in events if e.type == "message" and e.from_ == "critic")
    assert by_seq[verdict.seq] == "verdict: revise · notes: Say which Saturday, and where."
    selects = [e for e in events if e.type == "select"]
    assert [by_seq[e.seq] for e in selects] == [
        "chose writer (only_candidate) from writer",  # a plain successor: no route
        "chose critic (only_candidate) from critic",
        "chose writer (only_candidate) from writer · route: verdict = revise",
        "chose critic (only_candidate) from critic",
        "chose editor (only_candidate) from editor · route: verdict = approve",
        "chose owner (only_candidate) from owner",
    ]
    assert by_seq[events[-1].seq] == ("at review (route) · route: matches /(?i)\\bsigned off\\b/")
    writer = next(e for e in events if e.type == "message" and e.from_ == "writer")
    assert by_seq[writer.seq] == writer.content  # a reply with no format reads as written
    # The page's drawing shows each step as it stood: no route count of the run's end.
    labels = page.evaluate("document.getElementById('route-review-critic-0').textContent")
    assert "verdict = revise" in labels and "×" not in labels
    assert errors == []
    page.close()
