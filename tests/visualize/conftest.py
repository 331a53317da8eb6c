"""A headless Chromium for the run page tests, started once per test module; a long run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.visualize import flows

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.events import Event

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


def long_run(size: int) -> list[Event]:
    """``size`` events of team.yaml: rounds of director choice, model call, tool, message."""
    log = flows.Log().add(
        "run_start", flow={"path": "team.yaml", "name": "math-team", "hash": "sha256:0", "text": ""}
    )
    log.message("USER", "team", "Count with me.")
    speakers = ["mathematician", "reviewer", "mathematician", 'writer "quoted" <b>&{x}']
    turn = 0
    while len(log.events) < size - 1:
        who = speakers[turn % len(speakers)]
        log.add("select", channel="team", candidates=speakers[:2], chosen=who, by="round_robin")
        log.llm(who, f"turn {turn}")
        log.add("tool_call", agent=who, id=f"c{turn}", name="add", arguments={"a": turn, "b": 1})
        log.add("tool_result", agent=who, id=f"c{turn}", name="add", content=str(turn + 1))
        log.message(who, "team", f"turn {turn}: the sum is {turn + 1}")
        turn += 1
    log.add("terminate", node="team", reason="max_rounds")
    return log.events
