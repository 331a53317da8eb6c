"""``roost serve`` drains on SIGTERM: the step in flight finishes and is stored, the lease goes
back at once, what is past the grace is cancelled, and the process exits 0."""

from __future__ import annotations

import signal
import time
from typing import TYPE_CHECKING

import pytest
from fakes.gauged import GaugedLLMServer
from fakes.script import FakeUsage, Reply

from roost.engine.runner import CANCELLED
from tests.serve.conftest import (
    PRICED,
    Server,
    contents,
    settled,
    start_server,
    wait_for,
    write_flows,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def slow_model(delay: float) -> GaugedLLMServer:
    """A fake model whose every answer takes ``delay`` seconds."""
    return GaugedLLMServer(delay=delay, responder=lambda _: Reply(text="Four.", usage=FakeUsage()))


def flows_for(folder: Path, llm: GaugedLLMServer) -> Path:
    flows = write_flows(folder / "flows")
    (flows / "priced.yaml").write_text(PRICED.format(url=llm.url), encoding="utf-8")
    return flows


def mid_step(server: Server, llm: GaugedLLMServer) -> str:
    """A run of the slow model's flow, its first model call in flight."""
    run_id: str = server.client().post("/runs", json={"flow": "priced.yaml"}).json()["id"]
    wait_for(lambda: llm.in_flight == 1)
    return run_id


def exit_status(server: Server, timeout: float = 30) -> int:
    return server.process.wait(timeout=timeout)


def llm_calls(server: Server, run_id: str) -> list[dict[str, object]]:
    events = server.client().get(f"/runs/{run_id}/events").json()
    return [event for event in events if event["type"] == "llm_call"]


@pytest.fixture
def llm() -> Iterator[GaugedLLMServer]:
    with slow_model(1.5) as server:
        yield server


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_mid_step_stores_the_answer_refuses_new_work_and_exits_0(
    tmp_path: Path, llm: GaugedLLMServer, stop: signal.Signals
) -> None:
    flows = flows_for(tmp_path, llm)
    first = start_server(tmp_path, flows=flows)
    run_id = mid_step(first, llm)
    api = first.client()
    first.process.send_signal(stop)
    ready = wait_for(lambda: (r := api.get("/ready")).status_code == 503 and r)
    assert ready.json()["status"] == "draining" and ready.headers["retry-after"] == "5"
    refused = api.post("/runs", json={"flow": "hello.yaml"})
    assert (refused.status_code, refused.json()["kind"]) == (503, "draining")
    assert refused.headers["retry-after"] == "5"
    assert api.post(f"/runs/{run_id}/messages", json={"content": "x"}).status_code == 503
    assert exit_status(first) == 0
    assert "Traceback" not in first.errors()

    second = start_server(tmp_path, flows=flows)
    try:
        detail = settled(second.client(), run_id, "paused")
        assert detail["answer"] == "Four." and not detail["busy"]
        calls = llm_calls(second, run_id)
        assert [call["response"]["text"] for call in calls] == ["Four."]  # type: ignore[index]
        assert len(llm.requests) == 1  # the call was not made again by the next server
    finally:
        second.stop()


def test_a_step_past_the_grace_is_cancelled_and_its_lease_let_go(tmp_path: Path) -> None:
    with slow_model(8) as llm:
        flows = flows_for(tmp_path, llm)
        first = start_server(tmp_path, "--grace", "0.3", flows=flows)
        run_id = mid_step(first, llm)
        began = time.monotonic()
        first.process.send_signal(signal.SIGTERM)
        assert exit_status(first) == 0
        assert time.monotonic() - began < 6  # the grace decided, not the model's 8 s
        llm.delay = 0.05  # the retry below need not wait as long
        second = start_server(tmp_path, flows=flows)
        try:
            api = second.client()
            detail = settled(api, run_id, "error")
            errors = [e for e in api.get(f"/runs/{run_id}/events").json() if e["type"] == "error"]
            assert errors[-1]["content"] == CANCELLED
            assert llm_calls(second, run_id) == []  # dropped unrecorded: a retry asks again
            assert not detail["busy"]
            assert api.post(f"/runs/{run_id}/retry").status_code == 202  # no lease to wait out
            settled(api, run_id, "paused")
        finally:
            second.stop()


def test_a_second_signal_cancels_the_step_without_waiting_out_the_grace(tmp_path: Path) -> None:
    with slow_model(10) as llm:
        first = start_server(tmp_path, flows=flows_for(tmp_path, llm))  # a grace of 30 s
        mid_step(first, llm)
        first.process.send_signal(signal.SIGTERM)
        api = first.client()
        wait_for(lambda: api.get("/ready").status_code == 503)
        began = time.monotonic()
        first.process.send_signal(signal.SIGTERM)
        assert exit_status(first) == 0
        assert time.monotonic() - began < 7  # neither the grace nor the model's 10 s
        assert "cancelled by the drain" in first.errors()


@pytest.mark.postgres
def test_a_rolling_restart_of_two_workers_loses_no_message_and_repeats_no_call(
    tmp_path: Path, pg_url: str, llm: GaugedLLMServer
) -> None:
    flows = flows_for(tmp_path, llm)
    # A lease of 30 s: a run that waited for one would fail the deadline below.
    first = start_server(tmp_path, "--lease", "30", flows=flows, db=pg_url)
    second = start_server(tmp_path, "--lease", "30", flows=flows, db=pg_url)
    try:
        a, b = first.client(), second.client()
        run_id = a.post("/runs", json={"flow": "priced.yaml"}).json()["id"]
        settled(a, run_id, "paused")
        assert a.post(f"/runs/{run_id}/messages", json={"content": "one"}).status_code == 202
        wait_for(lambda: llm.in_flight == 1)  # the first worker steps the run now
        assert b.post(f"/runs/{run_id}/messages", json={"content": "two"}).json()["queued"] == 1
        began = time.monotonic()
        first.process.send_signal(signal.SIGTERM)
        assert exit_status(first) == 0
        settled(b, run_id, "paused")  # the other worker delivered the queued message
        assert time.monotonic() - began < 20  # well inside the 30 s lease
        said = [content for _, _, content in contents(b, run_id)]
        assert said == ["hi", "Four.", "one", "Four.", "two", "Four."]
        assert len(llm.requests) == 3  # one call per turn: none made twice
        assert "Traceback" not in first.errors()
    finally:
        first.stop()
        second.stop()
