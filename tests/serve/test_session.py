"""A queue per run: one step at a time, waiting messages merged into one turn, 429, cancel."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest

from roost.engine.runner import CANCELLED
from roost.serve.session import one_turn
from roost.store.leases import Queued
from tests.serve.conftest import Server, contents, paused, settled, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import httpx2


@pytest.fixture
def gate(server: Server) -> Iterator[Path]:
    """The file that lets the gated flow's tool go on: absent during the test, made after it."""
    path = server.flows.parent / "gate"
    path.unlink(missing_ok=True)
    yield path
    path.touch()  # no tool thread is left waiting when the server stops


def busy_run(api: httpx2.Client, flow: str) -> str:
    """A run of ``flow`` whose first step is running (its tool is waiting)."""
    answer = api.post("/runs", json={"flow": flow})
    assert answer.status_code == 201, answer.text
    run_id = str(answer.json()["id"])
    wait_for(lambda: api.get(f"/runs/{run_id}").json()["busy"])
    return run_id


def test_messages_sent_during_a_step_wait_and_become_one_turn(
    api: httpx2.Client, gate: Path
) -> None:
    run_id = busy_run(api, "gated.yaml")
    detail = api.get(f"/runs/{run_id}").json()
    assert detail["status"] == "running" and detail["busy"]

    queued = [
        api.post(f"/runs/{run_id}/messages", json={"content": text}).json()["queued"]
        for text in ("one", "two", "three")
    ]
    assert queued == [1, 2, 3]
    assert api.get(f"/runs/{run_id}").json()["queued"] == 3
    assert all(sender != "USER" for sender, _, _ in contents(api, run_id)[1:])

    gate.touch()
    settled(api, run_id, "paused")
    said = [content for sender, _, content in contents(api, run_id) if sender == "USER"]
    assert said == ["Wait for the gate.", "one\n\ntwo\n\nthree"]
    events = api.get(f"/runs/{run_id}/events").json()
    assert [e["type"] for e in events].count("resume") == 1


def test_a_full_queue_answers_429_and_cancel_drops_what_waits(
    api: httpx2.Client, gate: Path
) -> None:
    run_id = busy_run(api, "gated.yaml")
    for number in range(1, 33):
        answer = api.post(f"/runs/{run_id}/messages", json={"content": f"m{number}"})
        assert answer.status_code == 202 and answer.json()["queued"] == number
    full = api.post(f"/runs/{run_id}/messages", json={"content": "one too many"})
    assert full.status_code == 429
    assert full.json() == {
        "error": f"run {run_id} has 32 messages waiting, as many as it may; "
        "send again once it has taken some",
        "kind": "queue_full",
    }

    cancelled = api.post(f"/runs/{run_id}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json() == {"run": run_id, "dropped": 32}
    detail = settled(api, run_id, "error")
    assert detail["pending"]["content"] == CANCELLED


def test_cancel_stops_the_tool_in_flight_records_it_and_the_run_goes_on_by_retry(
    api: httpx2.Client,
) -> None:
    run_id = busy_run(api, "slow.yaml")
    answer = api.post(f"/runs/{run_id}/cancel")
    assert answer.status_code == 200
    detail = api.get(f"/runs/{run_id}").json()
    assert detail["status"] == "error" and not detail["busy"]
    assert detail["pending"]["content"] == CANCELLED
    events = api.get(f"/runs/{run_id}/events").json()
    assert [(e["type"], e.get("content")) for e in events[-2:]] == [
        ("tool_result", CANCELLED),
        ("error", CANCELLED),
    ]

    assert api.post(f"/runs/{run_id}/retry").status_code == 202
    settled(api, run_id, "paused")
    assert contents(api, run_id)[-1] == ("helper", "USER", "I stopped waiting.")


def test_cancel_with_no_step_in_flight_is_refused(api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    answer = api.post(f"/runs/{run_id}/cancel")
    assert answer.status_code == 409
    assert answer.json()["error"] == (
        f"run {run_id} is not taking a step: there is nothing to cancel"
    )


def test_a_busy_run_cannot_be_retried(api: httpx2.Client) -> None:
    run_id = busy_run(api, "slow.yaml")
    answer = api.post(f"/runs/{run_id}/retry")
    assert answer.status_code == 409
    assert "is taking a step now" in answer.json()["error"]
    api.post(f"/runs/{run_id}/cancel")


def test_many_runs_take_their_steps_at_the_same_time_on_one_server(
    api: httpx2.Client,
) -> None:
    runs = [busy_run(api, "slow.yaml") for _ in range(12)]
    # Every run is inside its tool at once: one event loop holds them all.
    assert all(api.get(f"/runs/{run_id}").json()["busy"] for run_id in runs)
    for run_id in runs:
        assert api.post(f"/runs/{run_id}/cancel").status_code == 200
    assert {api.get(f"/runs/{run_id}").json()["status"] for run_id in runs} == {"error"}


# ---------------------------------------------------------------------------- one turn's messages


def queue(*messages: tuple[str, str | None]) -> list[Queued]:
    return [Queued(n, sender, content) for n, (content, sender) in enumerate(messages, 1)]


def told(messages: list[Queued]) -> list[str]:
    return [m.content for m in messages]


@pytest.mark.parametrize("reason", ["tool_approval", "tool_plan", "manual_select"])
def test_an_approval_a_plan_or_a_choice_takes_one_answer_of_those_waiting(reason: str) -> None:
    turn, refused = one_turn(queue(("yes", None), ("no", None), ("b", "USER")), paused(reason))
    assert (told(turn), refused) == (["yes"], [])


@pytest.mark.parametrize("reason", [None, "human"])
def test_a_persons_turn_takes_every_message_waiting_from_them_in_order(
    reason: str | None,
) -> None:
    waiting = queue(("one", "USER"), ("two", None), ("three", "USER"))
    turn, refused = one_turn(waiting, paused(reason))
    assert (told(turn), refused) == (["one", "two", "three"], [])


def test_messages_from_another_sender_are_refused_before_a_turn_and_end_it_after() -> None:
    waiting = queue(("hi", "bob"), ("one", "USER"), ("me too", "bob"), ("two", "USER"))
    turn, refused = one_turn(waiting, paused(None))
    assert (told(turn), told(refused)) == (["one"], ["hi"])  # "two" waits for the next turn


LONG_CHAT = """
roost: 1
name: long-chat
defaults: {provider: mock, max_rounds: 100000}
providers:
  mock: {kind: scripted, replies: ["Noted."], when_exhausted: repeat_last}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  bot: {role: You note.}
start: {from: USER, to: bot, content: Hi}
"""


def test_a_message_sent_the_moment_a_step_ends_is_always_delivered(
    server: Server, api: httpx2.Client
) -> None:
    # Each message goes out as soon as the stream says the run is paused: while the
    # session that took the last step may still be handing its lease back.
    (server.flows / "long.yaml").write_text(LONG_CHAT, encoding="utf-8")
    run_id = api.post("/runs", json={"flow": "long.yaml"}).json()["id"]
    turns = 250  # the window is short: enough turns that a lost message shows
    with api.stream("GET", f"/runs/{run_id}/stream", timeout=20) as response:
        lines = response.iter_lines()
        seen = -1
        for turn in range(turns + 1):
            deadline = time.monotonic() + 10  # a lost message: the stream only pings then
            for line in lines:
                assert time.monotonic() < deadline, f"message n{turn - 1} was never delivered"
                if line.startswith("data:") and '"type": "state"' in line:
                    item = json.loads(line[5:])
                    if item["status"] == "paused" and item["next_seq"] - 1 > seen:
                        seen = item["next_seq"] - 1
                        break
            if turn < turns:
                answer = api.post(f"/runs/{run_id}/messages", json={"content": f"n{turn}"})
                assert answer.status_code == 202
    said = [content for frm, _, content in contents(api, run_id) if frm == "USER"]
    assert said == ["Hi", *(f"n{turn}" for turn in range(turns))]
