"""``roost serve`` in production: readiness, metrics, a graceful drain, against real processes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.gauged import GaugedLLMServer
from fakes.script import FakeUsage, Reply, Status
from prometheus_client.parser import text_string_to_metric_families

from tests.serve.conftest import (
    PRICED,
    TOKEN,
    Server,
    settled,
    start_server,
    wait_for,
    write_flows,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus exposition, parsed by the client library's own parser."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


@pytest.fixture(scope="module")
def llm() -> Iterator[GaugedLLMServer]:
    with GaugedLLMServer(
        delay=0.05, responder=lambda _: Reply(text="Four.", usage=FakeUsage(100, 20))
    ) as server:
        yield server


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, llm: GaugedLLMServer) -> Iterator[Server]:
    """One server with a token for the module's metrics tests (which run in order)."""
    folder = tmp_path_factory.mktemp("production")
    flows = write_flows(folder / "flows")
    (flows / "priced.yaml").write_text(PRICED.format(url=llm.url), encoding="utf-8")
    running = start_server(folder, flows=flows, token=TOKEN)
    yield running
    running.stop()


def test_ready_is_open_and_metrics_need_the_token(guarded: Server) -> None:
    anonymous = guarded.client(token=None)
    ready = anonymous.get("/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    refused = anonymous.get("/metrics")
    assert refused.status_code == 401 and refused.json()["kind"] == "unauthorized"
    assert anonymous.get("/health").status_code == 200


def test_metrics_count_runs_steps_calls_tokens_and_cost(guarded: Server) -> None:
    api = guarded.client()
    run_id = api.post("/runs", json={"flow": "priced.yaml"}).json()["id"]
    settled(api, run_id, "paused")
    assert api.post(f"/runs/{run_id}/messages", json={"content": "again"}).status_code == 202

    def second_pause() -> bool | None:  # "paused" alone may still be the first pause
        detail = settled(api, run_id, "paused")
        return detail["usage"]["calls"] == 2 or None

    wait_for(second_pause)
    response = api.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    found = samples(response.text)
    flow, provider = ("flow", "priced"), ("provider", "llm")
    assert found[("roost_runs", (("status", "paused"),))] == 1
    assert found[("roost_steps_total", (flow,))] == 2
    assert found[("roost_model_calls_total", (("outcome", "ok"), provider))] == 2
    assert found[("roost_model_call_seconds_count", (provider,))] == 2
    # Each call took the fake's 50 ms at least.
    assert found[("roost_model_call_seconds_sum", (provider,))] >= 0.1
    assert found[("roost_tokens_total", (flow, ("kind", "prompt"), provider))] == 200
    assert found[("roost_tokens_total", (flow, ("kind", "completion"), provider))] == 40
    # gpt-4o-mini: $0.15 per million prompt tokens, $0.60 per million completion tokens.
    cost = found[("roost_cost_dollars_total", (flow, provider))]
    assert cost == pytest.approx(2 * (100 * 0.15 + 20 * 0.60) / 1e6)
    assert found[("roost_ready", ())] == 1
    assert found[("roost_queue_depth", ())] == 0
    assert found[("roost_streams_open", ())] == 0
    assert ("roost_limit_waits_total", (provider,)) not in found  # no limit: nobody waited


def test_an_open_stream_and_a_failed_call_show(guarded: Server, llm: GaugedLLMServer) -> None:
    api = guarded.client()
    llm.script(Status(500, "down"))
    run_id = api.post("/runs", json={"flow": "priced.yaml"}).json()["id"]
    settled(api, run_id, "error")
    with api.stream("GET", f"/runs/{run_id}/stream"):
        found = samples(api.get("/metrics").text)
    assert found[("roost_streams_open", ())] == 1
    assert found[("roost_model_errors_total", (("provider", "llm"),))] == 1
    assert found[("roost_model_calls_total", (("outcome", "error"), ("provider", "llm")))] == 1
    assert found[("roost_runs", (("status", "error"),))] == 1


CAPPED = """
roost: 1
name: capped
providers:
  llm:
    kind: openai
    model: m
    base_url: "{url}/v1"
    api_key: k
    max_retries: 0
    max_concurrency: 1
agents:
  USER: {{role: A person., interrupt: ALWAYS}}
  bot: {{provider: llm, role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def test_a_provider_s_limit_holds_across_the_server_s_runs_and_its_waits_show(
    guarded: Server,
) -> None:
    api = guarded.client()
    with GaugedLLMServer(delay=0.3, responder=lambda _: Reply(text="Yes.")) as capped:
        (guarded.flows / "capped.yaml").write_text(CAPPED.format(url=capped.url), encoding="utf-8")
        run_ids = [api.post("/runs", json={"flow": "capped.yaml"}).json()["id"] for _ in range(3)]
        for run_id in run_ids:
            settled(api, run_id, "paused")
        assert capped.peak == 1 and len(capped.requests) == 3
    found = samples(api.get("/metrics").text)
    provider = (("provider", "llm"),)
    assert found[("roost_limit_waits_total", provider)] >= 2  # all but the first waited
    assert found[("roost_limit_wait_seconds_total", provider)] >= 0.3 + 0.6 - 0.2
    assert found[("roost_limit_waiting", provider)] == 0  # none waits now
    waited = [
        event.get("waited", 0)
        for run_id in run_ids
        for event in api.get(f"/runs/{run_id}/events").json()
        if event["type"] == "llm_call"
    ]
    assert sorted(waited)[0] == 0 and sorted(waited)[-1] >= 0.4
