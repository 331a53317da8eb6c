"""Images of messages through ``roost serve``: their bytes by hash, and shown on its page."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, expect

from tests.pictures import digest, png
from tests.serve.conftest import FLOWS, TOKEN, Server, start_server, write_flows
from tests.visualize.conftest import browser  # noqa: F401 - the headless Chromium

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

RED = png((200, 30, 30), size=6)
LOOK = """
roost: 1
name: look
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [a red square]}
agents:
  USER: {interrupt: ALWAYS}
  viewer: {role: You describe pictures.}
start: {from: USER, to: viewer, content: What is this?, images: [red.png]}
"""


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-images")
    flows = write_flows(folder / "flows", {**FLOWS, "look.yaml": LOOK})
    (flows / "red.png").write_bytes(RED)
    running = start_server(folder, flows=flows, token=TOKEN)
    yield running
    running.stop()


def started(server: Server) -> str:
    api = server.client()
    answer = api.post("/runs", json={"flow": "look.yaml"})
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["id"]
    return run_id


def test_an_image_is_served_by_its_hash_with_its_media_type(guarded: Server) -> None:
    run_id = started(guarded)
    api = guarded.client()
    events = api.get(f"/runs/{run_id}/events").json()
    (image,) = next(e for e in events if e["type"] == "message")["images"]
    assert image == {"hash": digest(RED), "media_type": "image/png", "name": "red.png"}
    answer = api.get(f"/images/{image['hash']}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png" and answer.content == RED
    # The token guards images as it guards runs; an unknown or malformed hash is not there.
    assert guarded.client(token=None).get(f"/images/{image['hash']}").status_code == 401
    unknown = "sha256:" + "0" * 64
    assert api.get(f"/images/{unknown}").status_code == 404
    assert api.get("/images/..%2F..%2Fetc%2Fpasswd").status_code == 404


def test_a_start_image_that_is_missing_is_refused_before_a_run_is_stored(
    tmp_path: Path,
) -> None:
    flows = write_flows(tmp_path / "flows", {"look.yaml": LOOK})  # no red.png beside it
    running = start_server(tmp_path, flows=flows)
    try:
        api = running.client()
        answer = api.post("/runs", json={"flow": "look.yaml"})
        assert answer.status_code == 422, answer.text
        assert answer.json()["kind"] == "invalid_flow"
        assert (
            "look.yaml:10:66: error: start.images[0]: red.png: no such image file"
            in answer.json()["error"]
        )
        assert api.get("/runs").json() == []
    finally:
        running.stop()


def test_the_page_shows_a_messages_image(browser: Browser, guarded: Server) -> None:  # noqa: F811
    run_id = started(guarded)
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        # The run named in the address opens once the page has the token.
        page.goto(f"{guarded.url}/#{run_id}")
        page.fill("#token", TOKEN)
        page.click("#token-form button")
        expect(page.locator("#run-title")).to_have_text(re.compile(re.escape(run_id)))
        image = page.locator(f'.ev.message img[data-hash="{digest(RED)}"]')
        expect(image).to_have_count(1)
        expect(image).to_have_attribute("src", re.compile(r"^blob:"))
        # Decoded by the browser: the picture's own size, not a broken image's.
        page.wait_for_function(
            "img => img.complete && img.naturalWidth === 6", arg=image.element_handle()
        )
        assert image.get_attribute("alt") == "red.png"
        assert not errors, errors
    finally:
        context.close()
