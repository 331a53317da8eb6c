"""Budgets through a real ``roost serve``: set with ``POST /runs``, answered by a message,
shown in the run's summary; priced on the fake model, which reports its usage."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import threading
from typing import TYPE_CHECKING, Any

import pytest
from fakes.llm_server import FakeLLMServer, Received
from playwright.sync_api import Browser, Page, expect

from tests.budgets.conftest import Looping, provider
from tests.serve.conftest import Server, settled, start_server, wait_for, write_flows
from tests.visualize.conftest import browser  # noqa: F401 - the headless Chromium

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx2
    from fakes.script import Action


def looping(fake: FakeLLMServer, budget: str = "") -> str:
    """Two members and a director on the fake model that never ends the conversation."""
    return textwrap.dedent(f"""\
        roost: 1
        defaults: {{provider: llm, max_rounds: 1000}}
        providers:
          llm: {provider(fake)}
        {"budget: " + budget if budget else ""}
        agents:
          a: {{role: You are a.}}
          b: {{role: You are b.}}
        channels:
          room:
            members: [a, b]
            max_rounds: 1000
            role: You direct the room.
            director: {{allow_repeat: true}}
        start: {{from: a, to: room, content: "Talk."}}
        """)


UNPRICED = """
roost: 1
providers:
  llm: {kind: openai, model: no-such-model, base_url: "http://127.0.0.1:9/v1", api_key: sk-x}
defaults: {provider: llm}
agents:
  USER: {role: A person.}
  a: {role: You are a.}
start: {from: USER, to: a, content: Hi}
"""


class Gated(Looping):
    """Looping, each answer held while ``gate`` is closed (a step kept running)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, received: Received) -> Action:
        self.gate.wait(timeout=60)
        return super().__call__(received)


@pytest.fixture(scope="module")
def gated() -> Gated:
    return Gated()


@pytest.fixture(scope="module")
def fake(gated: Gated) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(window=1_000_000, responder=gated) as running:
        yield running


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLMServer) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("budgets")
    flows = {
        "looping.yaml": looping(fake),
        "asking.yaml": looping(fake, "{cost: 0.2, on_exhausted: ask}"),
        "unpriced.yaml": UNPRICED,
    }
    running = start_server(folder, flows=write_flows(folder / "flows", flows))
    yield running
    running.stop()


@pytest.fixture
def api(served: Server) -> httpx2.Client:
    return served.client()


def events(api: httpx2.Client, run_id: str, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = api.get(f"/runs/{run_id}/events").json()
    return [e for e in found if e["type"] == kind]


def ending(api: httpx2.Client, run_id: str) -> str:
    """Why the run terminated: the reason of its terminate event."""
    (terminate,) = events(api, run_id, "terminate")
    return str(terminate["reason"])


def cost_of_calls(api: httpx2.Client, run_id: str) -> float:
    """What the run's model calls cost, from the summary (the fake reports every usage)."""
    cost = api.get(f"/runs/{run_id}").json()["cost"]
    assert cost is not None
    return float(cost)


def test_a_looping_director_stops_at_the_budget_posted(
    api: httpx2.Client, served: Server, fake: FakeLLMServer
) -> None:
    before = len(fake.requests)
    started = api.post("/runs", json={"flow": "looping.yaml", "budget": 0.5})
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    detail = settled(api, run_id, "terminated")
    assert ending(api, run_id) == "budget"
    spent = cost_of_calls(api, run_id)
    assert 0.3 < spent <= 0.5  # it ran a while, and never passed the limit
    # Recorded as the command line records it: a limit raised from outside, then the stop.
    raised, stop = events(api, run_id, "budget")
    assert (raised["action"], raised["allowed"], raised.get("node")) == ("raised", 0.5, None)
    assert (stop["action"], stop["limit"]) == ("stop", "cost")
    assert stop["spent"] + stop["estimate"] > 0.5
    # The refused call was never sent.
    assert len(fake.requests) - before == len(events(api, run_id, "llm_call"))
    (limit,) = detail["budget"]
    assert (limit["agent"], limit["limit"], limit["allowed"], limit["last"]) == (
        None,
        "cost",
        0.5,
        "stop",
    )
    assert limit["spent"] == pytest.approx(spent)
    assert limit["left"] == pytest.approx(0.5 - spent)
    replay = roost(served, "replay", run_id)
    assert replay.returncode == 0 and "identical" in replay.stdout, replay.stdout + replay.stderr


def roost(served: Server, *args: str) -> subprocess.CompletedProcess[str]:
    db = str(served.flows.parent / "runs.db")
    command = [sys.executable, "-m", "roost", *args, "--db", db]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("bad", ["0", "-1", '"0.5"', "true", '"lots"', "[1]", "1e999"])
def test_a_bad_budget_is_one_json_error(api: httpx2.Client, bad: str) -> None:
    runs = len(api.get("/runs").json())
    body = '{"flow": "looping.yaml", "budget": ' + bad + "}"
    sent = api.post("/runs", content=body, headers={"Content-Type": "application/json"})
    assert sent.status_code == 422, sent.text
    error = sent.json()
    assert error["kind"] == "invalid_request" and error["error"].startswith("body.budget"), error
    assert "\n" not in error["error"]
    assert len(api.get("/runs").json()) == runs


def test_a_budget_on_a_flow_without_prices_is_refused_as_the_cli_refuses_it(
    api: httpx2.Client, served: Server
) -> None:
    runs = len(api.get("/runs").json())
    refused = api.post("/runs", json={"flow": "unpriced.yaml", "budget": 1})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert "'llm'" in error and "price" in error
    assert len(api.get("/runs").json()) == runs  # no run was stored
    cli = roost(served, "run", str(served.flows / "unpriced.yaml"), "--budget", "1")
    assert cli.returncode != 0
    said = " ".join(cli.stderr.split())
    assert "a budget of 1 needs every provider's price" in said
    assert "a budget of 1 needs every provider's price" in error


def test_ask_is_answered_through_the_api(api: httpx2.Client, served: Server) -> None:
    run_id = api.post("/runs", json={"flow": "asking.yaml"}).json()["id"]
    detail = settled(api, run_id, "paused")
    waiting = detail["waiting_for"]
    assert (waiting["node"], waiting["reason"]) == ("budget", "budget")
    asked = waiting["budget"]
    assert (asked["limit"], asked["allowed"]) == ("cost", 0.2)
    assert detail["budget"][0]["last"] == "ask"
    calls = len(events(api, run_id, "llm_call"))
    # An answer that is neither a new limit above what was spent nor no: refused at once.
    for wrong, said in (("lots", "positive number"), ("0.01", "not above")):
        refused = api.post(f"/runs/{run_id}/messages", json={"content": wrong})
        assert refused.status_code == 400 and said in refused.json()["error"], refused.text
    assert not api.get(f"/runs/{run_id}").json()["queued"]
    sent = api.post(f"/runs/{run_id}/messages", json={"content": "0.6", "as": "budget"})
    assert sent.status_code == 202, sent.text
    wait_for(lambda: len(events(api, run_id, "llm_call")) > calls)
    detail = settled(api, run_id, "paused")
    assert cost_of_calls(api, run_id) <= 0.6
    raised = [e for e in events(api, run_id, "budget") if e["action"] == "raised"]
    assert [(e["limit"], e["allowed"]) for e in raised] == [("cost", 0.6)]
    (limit,) = detail["budget"]
    assert (limit["allowed"], limit["last"]) == (0.6, "ask")
    assert api.post(f"/runs/{run_id}/messages", json={"content": "no"}).status_code == 202
    detail = settled(api, run_id, "terminated")
    assert ending(api, run_id) == "budget"
    replay = roost(served, "replay", run_id)
    assert "identical" in replay.stdout, replay.stdout + replay.stderr


def test_a_wrong_answer_queued_during_a_step_is_refused_when_the_budget_asks(
    api: httpx2.Client, gated: Gated
) -> None:
    gated.gate.clear()  # the first call waits: the run is taking a step
    try:
        run_id = api.post("/runs", json={"flow": "asking.yaml"}).json()["id"]
        assert api.get(f"/runs/{run_id}").json()["busy"]
        # Sent while the step runs, the answer cannot be checked yet: it waits.
        sent = api.post(f"/runs/{run_id}/messages", json={"content": "lots"})
        assert sent.status_code == 202, sent.text
    finally:
        gated.gate.set()
    # Delivered once the budget asks, it is refused with a notice; the run still waits.
    detail = settled(api, run_id, "paused")
    assert detail["waiting_for"]["reason"] == "budget"
    assert not [e for e in events(api, run_id, "budget") if e["action"] == "raised"]
    assert not events(api, run_id, "resume")
    assert api.post(f"/runs/{run_id}/messages", json={"content": "0.5"}).status_code == 202
    wait_for(lambda: [e for e in events(api, run_id, "budget") if e["action"] == "raised"])


def test_a_run_without_a_budget_shows_none(api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "unpriced.yaml"}).json()["id"]
    assert api.get(f"/runs/{run_id}").json()["budget"] == []


# ---------------------------------------------------------------------- the page


@pytest.fixture
def page(browser: Browser, served: Server) -> Iterator[Page]:  # noqa: F811
    """The page, raising no script error."""
    context = browser.new_context()
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(served.url + "/")
    yield opened
    context.close()
    assert not errors, errors


def start_in(page: Page, flow: str, budget: str) -> str:
    """Starts a run of ``flow`` from the page's form with ``budget`` in its field; its id."""
    page.locator(f'#flow option[value="{flow}"]').wait_for(state="attached")
    page.select_option("#flow", flow)
    page.fill("#start-budget", budget)
    page.click("#start")
    expect(page.locator("#run-title")).to_have_text(re.compile(r"run \S+"))
    return page.locator("#run-title").inner_text().removeprefix("· run ")


def test_the_pages_budget_field_sets_the_runs_cost_limit(page: Page, api: httpx2.Client) -> None:
    page.locator('#flow option[value="looping.yaml"]').wait_for(state="attached")
    page.select_option("#flow", "looping.yaml")
    page.fill("#start-budget", "lots")
    page.click("#start")
    expect(page.locator("#problem")).to_contain_text("budget: input should be a valid number")
    run_id = start_in(page, "looping.yaml", "$0.5")
    line = page.locator("#budget li")
    expect(line).to_have_text(re.compile(r"^budget: \$0\.\d+ of \$0\.5 spent, \$0\.\d+ left"))
    expect(line).to_contain_text("stopped the run")
    (raised, _) = events(api, run_id, "budget")
    assert (raised["action"], raised["allowed"]) == ("raised", 0.5)
    assert cost_of_calls(api, run_id) <= 0.5


def test_the_page_raises_an_asking_budget_and_then_stops_it(page: Page, api: httpx2.Client) -> None:
    run_id = start_in(page, "asking.yaml", "")
    expect(page.locator("#asked")).to_contain_text("The budget has spent $")
    expect(page.locator("#asked")).to_contain_text("of $0.2 (cost)")
    expect(page.locator("#budget li")).to_contain_text("asks for a new limit")
    page.fill("#answer-text", "0.01")  # not above what was spent: refused, said at once
    page.click("#send")
    expect(page.locator("#problem")).to_contain_text("not above")
    page.fill("#answer-text", "0.6")
    page.click("#send")
    expect(page.locator("#budget li")).to_contain_text("of $0.6 spent")
    expect(page.locator("#asked")).to_contain_text("of $0.6 (cost)")
    raised = [e for e in events(api, run_id, "budget") if e["action"] == "raised"]
    assert [e["allowed"] for e in raised] == [0.6]
    page.get_by_role("button", name="Stop the run").click()
    expect(page.locator("#status")).to_have_text("terminated")
    expect(page.locator("#budget li")).to_contain_text("answered no: the run ended")
    assert ending(api, run_id) == "budget"
