"""The server's page shows a structured reply's fields and the route each step took."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.serve.conftest import Server, start_server, write_flows
from tests.visualize.conftest import browser  # noqa: F401 - the headless Chromium

if TYPE_CHECKING:
    from collections.abc import Iterator

EXAMPLE = Path(__file__).resolve().parents[2] / "flows" / "review_loop.yaml"


@pytest.fixture
def review_server(tmp_path: Path) -> Iterator[Server]:
    flows = write_flows(tmp_path / "flows", {"review.yaml": EXAMPLE.read_text()})
    running = start_server(tmp_path, flows=flows)
    yield running
    running.stop()


@pytest.fixture
def page(browser: Browser, review_server: Server) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(review_server.url + "/")
    yield opened
    context.close()
    assert not errors, errors


def bodies(page: Page, kind: str) -> list[str]:
    return page.locator(f".ev.{kind} .body").all_inner_texts()


def test_a_verdict_reads_as_its_fields_and_routed_steps_name_their_route(page: Page) -> None:
    page.locator('#flow option[value="review.yaml"]').wait_for(state="attached")
    page.select_option("#flow", "review.yaml")
    page.click("#start")
    expect(page.locator("#asked")).to_have_text("owner is asked (answering review)")
    assert "verdict: revise · notes: Say which Saturday, and where." in bodies(page, "message")
    assert "verdict: approve · notes: Clear and complete." in bodies(page, "message")
    routed = [body for body in bodies(page, "select") if "route:" in body]
    assert routed == [
        "chose writer (only_candidate) from writer · route: verdict = revise",
        "chose editor (only_candidate) from editor · route: verdict = approve",
    ]
    page.fill("#answer-text", "Signed off.")
    page.click("#send")
    expect(page.locator(".ev.terminate .body")).to_have_text(
        "at review (route) · route: matches /(?i)\\bsigned off\\b/"
    )
