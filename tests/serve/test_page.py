"""The page at ``/`` in headless Chromium, against a real ``roost serve`` process."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import FakeCall, Reply
from playwright.sync_api import Browser, Locator, Page, Route, expect

from tests.serve.conftest import (
    TOKEN,
    Server,
    contents,
    fake_served,
    settled,
    start_server,
)
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
    expect(page.locator("#drawing .hl")).to_have_count(0)  # an ended run waits for nobody
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
    expect(page.locator("#status")).to_have_text("paused")
    expect(page.locator("#node-USER")).to_have_class(HIGHLIGHTED)  # the run waits for USER
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
        asking = page.locator("#token-page")
        expect(asking).to_be_visible()
        expect(asking).to_contain_text("This server asks for a token")
        expect(asking).to_contain_text("--token or in ROOST_TOKENS")
        expect(page.locator("#problem")).to_be_hidden()
        assert "Authorization" not in page.locator("body").inner_text()
        page.fill("#token", "not-the-token-of-this-server")
        page.click("#token-form button")
        expect(page.locator("#problem")).to_have_text(
            "That token is not one this server knows: check it and paste it again."
        )
        expect(asking).to_be_visible()
        page.fill("#token", TOKEN)
        page.click("#token-form button")
        expect(asking).to_be_hidden()
        expect(page.locator("#home")).to_be_visible()
        start_in(page, "chat.yaml")
        # The live stream (a WebSocket, the token as its subprotocol) shows the bot's greeting.
        expect(message_row(page, "Hello! How can I help?")).to_have_count(1)
    finally:
        context.close()


# ---------------------------------------------------------------------- the page tells the truth


def run_option(page: Page, run_id: str) -> Locator:
    return page.locator(f'#runs option[value="{run_id}"]')


def test_a_run_that_ended_lights_no_node_and_the_run_list_follows_it(page: Page) -> None:
    run_id = start_in(page, "team/room.yaml")
    expect(page.locator("#asked")).to_have_text("Who speaks next in room?")
    expect(page.locator("#node-room")).to_have_class(HIGHLIGHTED)  # the run waits for room
    expect(run_option(page, run_id)).to_have_text(re.compile(r"· paused$"))
    page.get_by_role("button", name="critic").click()

    expect(page.locator("#status")).to_have_text("terminated")
    expect(page.locator("#now")).to_have_text("The run has ended.")
    expect(page.locator("#drawing .hl")).to_have_count(0)
    expect(page.locator(".ev.streaming")).to_have_count(0)
    expect(run_option(page, run_id)).to_have_text(re.compile(r"· terminated$"))


def test_at_a_tool_approval_the_graph_lights_the_agent_that_asks(page: Page) -> None:
    start_in(page, "approve.yaml")
    expect(page.locator("#asked")).to_contain_text("helper asks to run mean")
    expect(page.locator("#node-helper")).to_have_class(HIGHLIGHTED)
    expect(page.locator("#node-USER")).not_to_have_class(HIGHLIGHTED)
    expect(page.locator("#now")).to_have_text("helper waits for the approval of a tool call")


def test_the_text_a_step_streamed_ends_with_the_step(
    page: Page, server: Server, api: httpx2.Client
) -> None:
    with FakeLLMServer() as fake:
        # The second answer says something and asks for a tool: no message follows its text.
        fake.script(
            Reply(text="Which numbers?"),
            Reply(text="Let me work that out.", calls=(FakeCall("mean", {"data": [2, 4, 9]}),)),
        )
        flow = (
            fake_served(fake.url, "live")
            + """
tools:
  mean: {python: "statistics:fmean", description: The mean., approval: always}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  writer: {role: You compute., functions: [mean]}
start: {from: USER, to: writer, content: A mean please.}
"""
        )
        (server.flows / "live.yaml").write_text(flow, encoding="utf-8")
        run_id = api.post("/runs", json={"flow": "live.yaml"}).json()["id"]
        settled(api, run_id, "paused")
        page.goto(f"{server.url}/#{run_id}")
        expect(page.locator("#asked")).to_have_text("USER is asked (answering writer)")
        page.fill("#answer-text", "2, 4 and 9.")
        page.click("#send")
        expect(page.locator("#asked")).to_contain_text("writer asks to run mean")
    expect(page.locator(".ev.streaming")).to_have_count(0)
    expect(page.locator("#node-writer")).to_have_class(HIGHLIGHTED)
    expect(page.locator("#node-USER")).not_to_have_class(HIGHLIGHTED)


def test_the_landing_page_shows_the_flows_drawn_and_the_recent_runs(
    page: Page, api: httpx2.Client
) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml", "title": "From the API"}).json()["id"]
    page.reload()
    expect(page.locator("#home")).to_be_visible()
    expect(page.locator("#run-view")).to_be_hidden()
    chat = page.locator('.flow-card[data-flow="chat.yaml"]')
    expect(chat).to_contain_text("A person and a bot; the person is asked at every turn.")
    expect(chat.locator('svg [data-id="node-bot"]')).to_have_count(1)  # drawn by the server
    expect(page.locator('.flow-card[data-flow="broken.yaml"]')).to_contain_text("role of agent")
    recent = page.locator(f'#recent li[data-run="{run_id}"]')
    expect(recent).to_contain_text(f"{run_id} · chat · From the API")
    expect(recent.locator(".status")).to_have_text("paused")

    recent.get_by_role("link").click()
    expect(page.locator("#run-title")).to_have_text(f"· run {run_id}")
    expect(page.locator("#home")).to_be_hidden()
    expect(message_row(page, "Hello! How can I help?")).to_have_count(1)
    page.click("#home-link")
    expect(page.locator("#home")).to_be_visible()

    chat.get_by_role("button", name="Start").click()
    expect(page.locator("#run-title")).not_to_have_text(f"· run {run_id}")
    expect(page.locator("#asked")).to_have_text("USER is asked (answering bot)")


def test_a_flows_drawing_is_served_and_a_path_outside_is_refused(api: httpx2.Client) -> None:
    drawn = api.get("/flows/graph", params={"flow": "team/room.yaml"})
    assert drawn.status_code == 200 and 'id="node-critic"' in drawn.json()["svg"]
    assert api.get("/flows/graph", params={"flow": "../runs.db"}).status_code == 403
    assert api.get("/flows/graph", params={"flow": "broken.yaml"}).status_code == 422


def test_the_api_docs_page_works_offline(browser: Browser, server: Server) -> None:  # noqa: F811
    context = browser.new_context()
    elsewhere: list[str] = []

    def offline(route: Route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:  # no network beyond this machine
            elsewhere.append(route.request.url)
            route.abort()

    try:
        page = context.new_page()
        page.route("**/*", offline)
        page.goto(server.url + "/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("roost serve")
        expect(
            page.locator(".opblock-summary-path", has_text="/runs/{run_id}/cancel")
        ).to_have_count(1)
    finally:
        context.close()
    assert not elsewhere, elsewhere


def test_the_run_lists_follow_every_run_not_only_the_open_one(
    page: Page, api: httpx2.Client
) -> None:
    other = api.post("/runs", json={"flow": "team/room.yaml"}).json()["id"]
    settled(api, other, "paused")
    page.reload()
    recent = page.locator(f'#recent li[data-run="{other}"] .status')
    expect(recent).to_have_text("paused")
    opened = start_in(page, "chat.yaml")  # the run open is another one
    expect(page.locator("#asked")).to_have_text("USER is asked (answering bot)")
    expect(run_option(page, other)).to_have_text(re.compile(r"· paused$"))

    api.post(f"/runs/{other}/messages", json={"content": "critic"})  # elsewhere: it ends
    settled(api, other, "terminated")
    expect(run_option(page, other)).to_have_text(re.compile(r"· terminated$"), timeout=10_000)
    expect(run_option(page, opened)).to_have_text(re.compile(r"· paused$"))
    page.click("#home-link")
    expect(recent).to_have_text("terminated")

    again = api.post("/runs", json={"flow": "team/room.yaml"}).json()["id"]  # a new run comes
    expect(page.locator(f'#recent li[data-run="{again}"]')).to_have_count(1, timeout=10_000)
