"""The page at ``/`` in headless Chromium, against a real ``roost serve`` process."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.serve.conftest import TOKEN, Server, contents, start_server
from tests.visualize.conftest import browser  # noqa: F401 - the headless Chromium

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import httpx2

HIGHLIGHTED = re.compile(r"\bhl\b")


@pytest.fixture
def page(browser: Browser, server: Server) -> Iterator[Page]:  # noqa: F811
    """The page, which must load nothing but from the server, and raise no script error."""
    context = browser.new_context()
    opened = context.new_page()
    elsewhere: list[str] = []
    errors: list[str] = []
    opened.on(
        "request",
        lambda request: (
            None if request.url.startswith(server.url) else elsewhere.append(request.url)
        ),
    )
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(server.url + "/")
    yield opened
    context.close()
    assert not elsewhere, elsewhere
    assert not errors, errors


def start_in(page: Page, flow: str) -> str:
    """Starts a run of ``flow`` from the page; its id."""
    page.locator(f'#flow option[value="{flow}"]').wait_for(state="attached")
    page.select_option("#flow", flow)
    page.click("#start")
    expect(page.locator("#run-title")).to_have_text(re.compile(r"run \S+"))
    return page.locator("#run-title").inner_text().removeprefix("· run ")


def message_row(page: Page, text: str) -> Locator:
    return page.locator(".ev.message", has=page.locator(".body", has_text=text))


def test_a_tool_approval_is_answered_in_the_page_and_the_run_ends(
    page: Page, api: httpx2.Client
) -> None:
    run_id = start_in(page, "approve.yaml")
    expect(page.locator("#asked")).to_have_text(
        'helper asks to run mean({"data":[2,4,9]}): approve it, or say why not'
    )
    page.get_by_role("button", name="Approve").click()

    expect(page.locator("#status")).to_have_text("terminated")
    expect(message_row(page, "The mean is 5.")).to_have_count(1)
    expect(page.locator("#answer")).to_be_hidden()
    expect(page.locator("#node-USER")).to_have_class(HIGHLIGHTED)  # who spoke last
    events = api.get(f"/runs/{run_id}/events").json()
    assert [e["feedback"] for e in events if e["type"] == "resume"] == ["yes"]
    assert events[-1]["type"] == "terminate"


def test_a_person_answers_in_the_page_then_forks_from_their_message(
    page: Page, api: httpx2.Client
) -> None:
    run_id = start_in(page, "chat.yaml")
    expect(page.locator("#asked")).to_have_text("USER is asked (answering bot)")
    page.fill("#answer-text", "Four of us.")
    page.click("#send")
    expect(message_row(page, "Noted.")).to_have_count(1)
    expect(page.locator("#node-bot")).to_have_class(HIGHLIGHTED)
    expect(page.locator("#status")).to_have_text("paused")
    assert contents(api, run_id)[-2:] == [("USER", "bot", "Four of us."), ("bot", "USER", "Noted.")]

    message_row(page, "Four of us.").get_by_role("button", name="Fork").click()
    page.fill(".fork-form textarea", "Five of us.")
    page.get_by_role("button", name="Fork from here").click()
    expect(page.locator("#run-title")).not_to_have_text(f"· run {run_id}")
    expect(message_row(page, "Five of us.")).to_have_count(1)
    expect(page.locator("#status")).to_have_text("paused")

    fork_id = page.locator("#run-title").inner_text().removeprefix("· run ")
    assert api.get(f"/runs/{fork_id}").json()["parent"] == run_id
    said = [text for who, _, text in contents(api, fork_id) if who == "USER"]
    assert said == ["Hi", "Five of us."]
    assert contents(api, run_id)[-2][2] == "Four of us."  # the first run is as it was


def test_a_channel_asks_in_the_page_who_speaks(page: Page, api: httpx2.Client) -> None:
    run_id = start_in(page, "team/room.yaml")
    expect(page.locator("#asked")).to_have_text("Who speaks next in room?")
    expect(page.locator("#choices button")).to_have_text(["writer", "critic"])
    page.get_by_role("button", name="critic").click()
    expect(message_row(page, "I write.")).to_have_count(1)
    assert contents(api, run_id)[1] == ("critic", "room", "I write.")


def test_cancel_and_retry_in_the_page(page: Page, api: httpx2.Client) -> None:
    run_id = start_in(page, "slow.yaml")
    cancel = page.locator("#cancel")
    expect(cancel).to_be_enabled()  # the tool is running
    cancel.click()
    expect(page.locator("#status")).to_have_text("error")
    assert api.get(f"/runs/{run_id}").json()["status"] == "error"
    page.click("#retry")
    expect(message_row(page, "I stopped waiting.")).to_have_count(1)
    expect(page.locator("#status")).to_have_text("paused")


def test_an_error_from_the_server_is_shown_as_its_one_line(page: Page, api: httpx2.Client) -> None:
    run_id = start_in(page, "hello.yaml")
    expect(page.locator("#status")).to_have_text("terminated")
    # The last message and the end of the run are one step: no fork can start between them.
    last = page.locator(".ev.message").last
    last.get_by_role("button", name="Fork").click()
    page.get_by_role("button", name="Fork from here").click()
    expect(page.locator("#problem")).to_have_text(re.compile(rf"^run {run_id}: events \d+ to \d+"))
    expect(page.locator("#run-title")).to_have_text(f"· run {run_id}")
    assert api.get(f"/runs/{run_id}").json()["status"] == "terminated"


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Server]:
    running = start_server(tmp_path, token=TOKEN)
    yield running
    running.stop()


def test_the_page_asks_for_the_token_and_uses_it(
    browser: Browser,  # noqa: F811
    guarded: Server,
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(guarded.url + "/")
        expect(page.locator("#problem")).to_have_text(
            "this server needs a token: send the header Authorization: Bearer TOKEN"
        )
        page.fill("#token", TOKEN)
        page.click("#token-form button")
        expect(page.locator("#token-form")).to_be_hidden()
        start_in(page, "chat.yaml")
        # The live stream (a WebSocket, the token as its subprotocol) shows the bot's greeting.
        expect(message_row(page, "Hello! How can I help?")).to_have_count(1)
    finally:
        context.close()
