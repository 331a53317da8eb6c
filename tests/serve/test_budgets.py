"""Budgets through a real ``roost serve``: set with ``POST /runs``, answered by a message,
shown in the run's summary; priced on the fake model, which reports its usage."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest
from fakes.llm_server import FakeLLMServer

from tests.budgets.conftest import Looping, provider
from tests.serve.conftest import Server, settled, start_server, wait_for, write_flows

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx2


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


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(window=1_000_000, responder=Looping()) as running:
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


def test_a_run_without_a_budget_shows_none(api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "unpriced.yaml"}).json()["id"]
    assert api.get(f"/runs/{run_id}").json()["budget"] == []
