"""Two ``roost serve`` processes on one PostgreSQL database serve the same runs safely."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import Reply

from roost.engine.runner import CANCELLED
from tests.serve.conftest import Server, contents, settled, start_server, wait_for, write_flows

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def workers(
    request: pytest.FixtureRequest, tmp_path: Path, pg_url: str
) -> Iterator[tuple[Server, Server]]:
    """Two servers on one database and one flows folder.

    A stopped worker's lease lasts 30 s, or the seconds a test gives as its parameter.
    """
    lease = str(getattr(request, "param", 30))
    flows = write_flows(tmp_path / "flows")
    first = start_server(tmp_path, "--lease", lease, flows=flows, db=pg_url)
    second = start_server(tmp_path, "--lease", lease, flows=flows, db=pg_url)
    yield first, second
    (tmp_path / "gate").touch()  # no tool thread is left waiting
    for worker in (first, second):
        worker.stop()
        assert "Traceback" not in worker.errors(), worker.errors()


def check_log(events: list[dict[str, object]]) -> None:
    """One run_start, and every seq once, in order: no step was taken twice at once."""
    assert [event["seq"] for event in events] == list(range(len(events)))
    assert [event["type"] for event in events].count("run_start") == 1


def test_a_run_started_on_one_worker_is_answered_through_the_other(
    workers: tuple[Server, Server],
) -> None:
    first, second = (worker.client() for worker in workers)
    run_id = first.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    settled(first, run_id, "paused")
    assert second.get(f"/runs/{run_id}").json()["status"] == "paused"

    assert second.post(f"/runs/{run_id}/messages", json={"content": "From B"}).status_code == 202
    settled(second, run_id, "paused")
    assert contents(first, run_id)[-2:] == [("USER", "bot", "From B"), ("bot", "USER", "Noted.")]
    check_log(first.get(f"/runs/{run_id}/events").json())


LIVE = """
roost: 1
name: live
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: sk-test, max_retries: 0}}
defaults: {{provider: llm, max_rounds: 100}}
agents:
  USER: {{interrupt: ALWAYS, role: A person.}}
  bot: {{role: You take notes.}}
start: {{from: USER, to: bot, content: Hi}}
"""


def test_messages_sent_to_both_workers_at_once_are_each_delivered_once_in_order(
    workers: tuple[Server, Server],
) -> None:
    clients = [worker.client() for worker in workers]
    with FakeLLMServer() as fake:
        fake.script(*[Reply(text="Noted.") for _ in range(200)])
        (workers[0].flows / "live.yaml").write_text(LIVE.format(url=fake.url), encoding="utf-8")
        runs = [clients[0].post("/runs", json={"flow": "live.yaml"}).json()["id"] for _ in range(4)]
        for run_id in runs:
            settled(clients[0], run_id, "paused")
        sent: dict[str, list[str]] = {run_id: [] for run_id in runs}
        failures: list[str] = []

        def send(run_id: str) -> None:
            # Each thread alternates the workers, so both try to take the run's next step.
            for number in range(8):
                text = f"{run_id[:6]}-{number}"
                url = f"/runs/{run_id}/messages"
                answer = clients[number % 2].post(url, json={"content": text})
                if answer.status_code != 202:
                    failures.append(answer.text)
                sent[run_id].append(text)

        threads = [threading.Thread(target=send, args=(run_id,)) for run_id in runs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failures

        calls = 0
        for run_id in runs:
            settled(clients[1], run_id, "paused")
            said = [text for who, _, text in contents(clients[1], run_id) if who == "USER"][1:]
            # Messages that waited together became one turn; none was lost or doubled.
            assert "\n\n".join(said).split("\n\n") == sent[run_id]
            events = clients[1].get(f"/runs/{run_id}/events").json()
            check_log(events)
            calls += [event["type"] for event in events].count("llm_call")
        # One worker at a time took each step: no model call was made twice.
        assert len(fake.requests) == calls


@pytest.mark.parametrize("workers", [2], indirect=True)
def test_a_killed_workers_run_is_taken_over_once_its_lease_expires(
    workers: tuple[Server, Server], tmp_path: Path
) -> None:
    first, second = workers
    api = first.client()
    run_id = api.post("/runs", json={"flow": "gated.yaml"}).json()["id"]
    wait_for(lambda: api.get(f"/runs/{run_id}").json()["busy"])  # inside its tool, on first
    assert second.client().get(f"/runs/{run_id}").json()["busy"]  # the other sees the lease

    first.kill()
    (tmp_path / "gate").touch()
    detail = settled(second.client(), run_id, "paused")
    assert detail["waiting_for"]["node"] == "USER"
    assert contents(second.client(), run_id)[-1] == ("helper", "USER", "The gate is open.")
    events = second.client().get(f"/runs/{run_id}/events").json()
    check_log(events)
    # The step the killed worker left undone was redone, its tool call answered once.
    assert [event["type"] for event in events].count("tool_result") == 1


def test_a_cancel_sent_to_the_other_worker_stops_the_step(
    workers: tuple[Server, Server],
) -> None:
    first, second = (worker.client() for worker in workers)
    run_id = first.post("/runs", json={"flow": "slow.yaml"}).json()["id"]
    wait_for(lambda: first.get(f"/runs/{run_id}").json()["busy"])  # in its tool, on first

    assert second.post(f"/runs/{run_id}/cancel").status_code == 200
    detail = settled(second, run_id, "error")
    assert detail["pending"]["content"] == CANCELLED
    events = second.get(f"/runs/{run_id}/events").json()
    assert [event["type"] for event in events[-2:]] == ["tool_result", "error"]
    check_log(events)
