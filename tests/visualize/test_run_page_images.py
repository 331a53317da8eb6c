"""The run page shows the images of a run's messages, embedded, in a real browser."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.cli_inprocess import run_cli
from tests.pictures import GIF, digest, png
from tests.visualize.conftest import browser  # noqa: F401 - the headless Chromium

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser

RED = png((200, 30, 30), size=5)
FLOW = """
roost: 1
name: look
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [a red square, a dot]}
agents:
  USER: {interrupt: ALWAYS}
  viewer: {role: You describe pictures.}
start: {from: USER, to: viewer, content: What is this?, images: [red.png]}
"""


def test_the_replay_page_shows_each_messages_images(
    browser: Browser,  # noqa: F811
    tmp_path: Path,
) -> None:
    (tmp_path / "look.yaml").write_text(FLOW)
    (tmp_path / "red.png").write_bytes(RED)
    (tmp_path / "dot.gif").write_bytes(GIF)
    events = tmp_path / "run.jsonl"
    assert run_cli("run", "look.yaml", "--events", str(events), cwd=tmp_path).returncode == 0
    answer = ("--answer", "and this?", "--image", "dot.gif", "--no-input")
    assert run_cli("continue", str(events), *answer, cwd=tmp_path).returncode == 0
    run_id = json.loads(events.read_text().splitlines()[0])["run"]
    for ref, name in ((run_id, "stored.html"), (str(events), "file.html")):
        done = run_cli("render", "look.yaml", "--run", ref, "-o", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shown = _images_shown(browser, tmp_path / name)
        assert shown == [
            [digest(RED), "red.png", 5],  # the start message's
            [digest(GIF), "dot.gif", 1],  # the answer's
        ]


def _images_shown(browser: Browser, path: Path) -> list[list[object]]:  # noqa: F811
    """Each image of the page's transcript: its hash, alt text and decoded width."""
    page = browser.new_page()
    url = path.resolve().as_uri()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.route(
        "**/*", lambda route: route.continue_() if route.request.url == url else route.abort()
    )
    try:
        page.goto(url)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.ev img')].every(i => i.complete)"
        )
        shown: list[list[object]] = page.evaluate(
            "() => [...document.querySelectorAll('.ev.message img')]"
            ".map(i => [i.dataset.hash, i.alt, i.naturalWidth])"
        )
    finally:
        page.close()
    # Embedded as data: URLs, the page loads nothing but itself.
    assert [r for r in requests if r != url and not r.startswith("data:")] == []
    return shown
