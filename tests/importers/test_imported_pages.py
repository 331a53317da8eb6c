"""An imported run drawn by ``roost render FLOW --run RUN -o page.html`` (FLOW the flow its
``run_start`` records): the run page steps through every event in Chromium."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.fakes.run_page import state
from tests.importers.conftest import FIXTURES, roost

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser


@pytest.mark.parametrize(
    ("name", "fmt", "args"),
    [
        ("langgraph_group.sqlite", "langgraph", ["--thread", "haiku"]),
        ("langgraph_tools.sqlite", "langgraph", []),
        ("ag2_log.sqlite", "ag2", []),
    ],
)
def test_the_replay_page_of_an_imported_run_steps_through_it(
    browser: Browser, tmp_path: Path, name: str, fmt: str, args: list[str]
) -> None:
    done = roost(tmp_path, "import", str(FIXTURES / name), "--from", fmt, *args)
    run_id = done.stdout.split()[2]
    exported = roost(tmp_path, "export", run_id)
    events = [json.loads(line) for line in exported.stdout.splitlines()]
    (tmp_path / "imported.yaml").write_text(events[0]["flow"]["text"])
    drawn = roost(tmp_path, "render", "imported.yaml", "--run", run_id, "-o", "page.html")
    assert drawn.returncode == 0, drawn.stderr
    page = browser.new_page()
    url = (tmp_path / "page.html").resolve().as_uri()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda r: r.continue_() if r.request.url == url else r.abort())
    page.goto(url)
    try:
        for index, event in enumerate(events):
            if index:
                page.keyboard.press("ArrowRight")
            shown = state(page)
            assert shown["counter"] == f"{index + 1} / {len(events)}"
            assert shown["current"] == [f"ev-{index}"]
            if event["type"] == "message":
                assert shown["body"] == event["content"]
        assert shown["stateShown"] and errors == []
    finally:
        page.close()
