"""A run's summary (``GET /runs/{id}``) says how many of its model calls wait now for their
turn at a provider's limits, against a real ``roost serve`` and a fake model that takes its time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakes.gauged import GaugedLLMServer
from fakes.script import Reply

from tests.serve.conftest import settled, start_server, wait_for, write_flows

if TYPE_CHECKING:
    from pathlib import Path

CAPPED = """
roost: 1
name: capped
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: k, max_retries: 0,
         max_concurrency: 1}}
agents:
  USER: {{role: A person., interrupt: ALWAYS}}
  bot: {{provider: llm, role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def test_the_run_summary_counts_the_calls_waiting_for_a_provider_s_limits(tmp_path: Path) -> None:
    with GaugedLLMServer(delay=1.0, responder=lambda _: Reply(text="Yes.")) as capped:
        flows = write_flows(tmp_path / "flows")
        (flows / "capped.yaml").write_text(CAPPED.format(url=capped.url), encoding="utf-8")
        server = start_server(tmp_path, flows=flows)
        try:
            api = server.client()
            first = api.post("/runs", json={"flow": "capped.yaml"}).json()["id"]
            wait_for(lambda: capped.in_flight == 1)  # the first run holds the only turn
            second = api.post("/runs", json={"flow": "capped.yaml"}).json()["id"]
            waiting = wait_for(lambda: api.get(f"/runs/{second}").json()["waiting_on_limits"])
            assert waiting == 1
            assert api.get(f"/runs/{first}").json()["waiting_on_limits"] == 0  # its call went
            for run_id in (first, second):
                assert settled(api, run_id, "paused")["waiting_on_limits"] == 0
        finally:
            server.stop()
    assert capped.peak == 1
