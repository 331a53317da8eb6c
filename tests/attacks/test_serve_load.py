"""Attacks on a real ``roost serve`` process through load and timing: a message that
comes too late for its run, many streams on one large run, a run another process
steps, and listings of many runs. After each, the server must still answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roost.store.schema import RUNS
from roost.store.sql import SqlStore
from tests.serve.conftest import GATE, settled, sse_items, start_server, wait_for, write_flows
from tests.store.conftest import message, start_event

if TYPE_CHECKING:
    import httpx2

# The helper's tool waits for the file ``gate``; its answer after the tool ends the run
# (ENDS), or the scripted model has no answer left and the step stops at an error (FAILS).
LAST_STEP = """
roost: 1
name: {name}
defaults: {{provider: mock}}
providers:
  mock:
    kind: scripted
    replies:
      - {{tool_calls: [{{name: gate, arguments: {{path: gate}}}}]}}
{last}
tools:
  gate: {{python: "gate:wait", description: Waits until a file exists.}}
agents:
  USER: {{role: A person.}}
  helper: {{role: You wait when asked., functions: [gate]}}
start: {{from: USER, to: helper, content: Wait for the gate.}}
"""
ENDS = "      - Open. TERMINATE"


def healthy_within(client: httpx2.Client, seconds: float) -> float:
    """How long ``/health`` took to answer; fails when it does not within ``seconds``."""
    began = time.monotonic()
    answer = client.get("/health", timeout=seconds)
    assert answer.status_code == 200
    return time.monotonic() - began


def test_a_message_posted_during_a_runs_last_step_is_dropped_and_the_server_answers(
    tmp_path: Path,
) -> None:
    flows = write_flows(
        tmp_path / "flows",
        {
            "ends.yaml": LAST_STEP.format(name="ends", last=ENDS),
            "fails.yaml": LAST_STEP.format(name="fails", last=""),
            "gate.py": GATE,
        },
    )
    server = start_server(tmp_path, flows=flows)
    try:
        api = server.client()
        for flow, status in (("ends.yaml", "terminated"), ("fails.yaml", "error")):
            (tmp_path / "gate").unlink(missing_ok=True)
            run_id: str = api.post("/runs", json={"flow": flow}).json()["id"]
            wait_for(partial(_busy, api, run_id))
            sent = api.post(f"/runs/{run_id}/messages", json={"content": "one more thing"})
            assert sent.status_code == 202, sent.text
            with api.stream("GET", f"/runs/{run_id}/stream", timeout=30) as stream:
                notices = _notices(stream, tmp_path / "gate")
            assert any(n.get("content") == "one more thing" for n in notices), notices
            assert "not delivered" in notices[0]["message"]
            detail = settled(api, run_id, status)
            assert detail["queued"] == 0
            assert healthy_within(api, 5) < 5
        # The process is not spinning: it sleeps between requests.
        cpu_before = _cpu_seconds(server.process.pid)
        time.sleep(2)
        assert _cpu_seconds(server.process.pid) - cpu_before < 1.0
    finally:
        server.stop()


def _busy(api: httpx2.Client, run_id: str) -> bool:
    return bool(api.get(f"/runs/{run_id}").json()["busy"])


def _notices(stream: httpx2.Response, gate: Path) -> list[dict[str, Any]]:
    """The notices of an SSE stream: the gate is opened once the stream is following
    the run (its first state), and the notices read until the run has settled."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    for line in stream.iter_lines():
        if time.monotonic() > deadline:
            break
        if not line.startswith("data:"):
            continue
        item = json.loads(line.removeprefix("data:").strip())
        if item["type"] == "state" and not gate.exists():
            gate.write_text("open")
        if item["type"] == "notice":
            found.append(item)
        if item["type"] == "state" and item.get("status") in ("terminated", "error") and found:
            break
    return found


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_listings_of_a_large_store_leave_the_server_answering(tmp_path: Path) -> None:
    """Ten ``GET /runs?limit=1`` at once on a store of 100,000 runs: each reads one
    row, in a thread, so ``/health`` answers meanwhile (each used to read every run on
    the event loop: 2.5 s apiece, ``/health`` waiting for all ten)."""
    db = tmp_path / "runs.db"
    store = SqlStore(str(db))
    with store.engine.begin() as conn:
        conn.execute(RUNS.insert(), [_row(n) for n in range(100_000)])
    store.close()
    server = start_server(tmp_path, db=str(db))
    try:
        api = server.client(timeout=120)
        with ThreadPoolExecutor(10) as pool:
            pages = [pool.submit(api.get, "/runs", params={"limit": 1}) for _ in range(10)]
            waited = healthy_within(server.client(), 5)
            listed = [page.result().json() for page in pages]
        assert waited < 5
        assert all([row["id"] for row in page] == ["run-099999"] for page in listed)
        second = api.get("/runs", params={"limit": 2, "offset": 1}).json()
        assert [row["id"] for row in second] == ["run-099998", "run-099997"]
    finally:
        server.stop()


def _row(n: int) -> dict[str, Any]:
    """A stored run's row (no events: a listing reads the runs table only)."""
    stamp = f"2026-01-01T00:00:00.{n:06d}Z"
    return {
        "id": f"run-{n:06d}", "flow_name": "f", "flow_path": "f.yaml", "flow_hash": "sha256:0",
        "flow_text": "roost: 1", "created": stamp, "updated": stamp, "status": "terminated",
    }  # fmt: skip


def big_run(db: Path) -> str:
    """A stored run of about 1.6 MB of events (400 messages of 4 KB), left running."""
    store = SqlStore(str(db))
    run = "20260101-000000-b16b16"
    events = [start_event(run), *(message(seq, run, "x" * 4000) for seq in range(1, 401))]
    store.import_events(events)
    store.close()
    return run


def test_many_streams_on_a_large_run_leave_the_server_answering(tmp_path: Path) -> None:
    """200 SSE clients open on a run of 1.6 MB at once, none of them reading: the
    catch-up is read off the event loop, in pages, once for streams asking the same,
    and encoded once; ``/health`` answers all the while (200 such streams used to
    hold it for ~50 s, each loading and encoding the whole log on the loop)."""
    db = tmp_path / "runs.db"
    run = big_run(db)
    server = start_server(tmp_path, "--streams-per-client", "250", db=str(db))
    try:
        opened: list[int] = []
        stop = threading.Event()

        def stream() -> None:
            client = server.client(timeout=300)
            with client.stream("GET", f"/runs/{run}/stream") as response:
                opened.append(response.status_code)
                stop.wait(300)  # holds the stream open and reads nothing

        threads = [threading.Thread(target=stream, daemon=True) for _ in range(200)]
        for thread in threads:
            thread.start()
        # Generous for a busy machine: the streams used to hold /health for ~50 s.
        probe = server.client()
        waited = [healthy_within(probe, 15)]
        while len(opened) < 200 and len(waited) < 100:  # while the streams open
            waited.append(healthy_within(probe, 15))
        wait_for(lambda: len(opened) == 200, timeout=300)
        assert set(opened) == {200}
        assert max(waited) < 15
        # One reader still gets every event, in order.
        items = sse_items(server.client(), f"/runs/{run}/stream", until=_state)
        assert [i["event"]["seq"] for i in items if i["type"] == "event"] == list(range(401))
        stop.set()
    finally:
        server.stop()


def test_one_client_may_hold_only_so_many_streams(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run = big_run(db)
    server = start_server(tmp_path, "--streams-per-client", "3", db=str(db))
    try:
        client = server.client()
        with ExitStack() as streams:
            for _ in range(3):
                held = streams.enter_context(client.stream("GET", f"/runs/{run}/stream"))
                assert held.status_code == 200
            with client.stream("GET", f"/runs/{run}/stream") as refused:
                assert refused.status_code == 429
                assert json.loads(refused.read())["kind"] == "too_many_streams"
        # Closed streams are counted out (once the server has seen them go): a new one opens.
        wait_for(partial(_opens, client, f"/runs/{run}/stream"))
    finally:
        server.stop()


def _opens(client: httpx2.Client, path: str) -> bool:
    """Whether a stream opens (it is closed again at once)."""
    with client.stream("GET", path) as response:
        return bool(response.status_code == 200)


def _state(item: dict[str, Any]) -> bool:
    return bool(item["type"] == "state")


def test_a_run_a_terminal_steps_is_not_retried_or_sent_to_by_the_server(tmp_path: Path) -> None:
    """``roost run --db SAME`` steps a run whose tool waits; the server sharing the store
    answers 409 to a retry and to a message for it (it used to take the retry: the
    model called twice, two processes writing one run), and 202 once the command ended."""
    flows = write_flows(
        tmp_path / "flows",
        {
            "ends.yaml": LAST_STEP.format(name="ends", last=ENDS),
            "gate.py": GATE,
        },
    )
    db = tmp_path / "runs.db"
    server = start_server(tmp_path, flows=flows, db=str(db))
    command = [sys.executable, "-m", "roost", "run", str(flows / "ends.yaml"), "--db", str(db)]
    terminal = subprocess.Popen(
        command, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    try:
        api = server.client()
        run_id = wait_for(lambda: [row["id"] for row in api.get("/runs").json()], 60)[0]
        wait_for(lambda: api.get(f"/runs/{run_id}").json()["status"] == "running", 60)
        retried = api.post(f"/runs/{run_id}/retry")
        assert retried.status_code == 409, retried.text
        sent = api.post(f"/runs/{run_id}/messages", json={"content": "me too"})
        assert sent.status_code == 409, sent.text
        assert "being stepped by the command line (pid" in sent.json()["error"]
        (tmp_path / "gate").write_text("open")
        assert terminal.wait(60) == 0
        events = api.get(f"/runs/{run_id}/events").json()
        assert [e["type"] for e in events].count("llm_call") == 2  # the model called once a step
        assert events[-1]["type"] == "terminate"
    finally:
        terminal.kill()
        terminal.wait()
        server.stop()


CHILD = """
roost: 1
name: child
description: Waits for the gate, then answers.
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: gate, arguments: {path: gate}}]}
      - Child done.
tools:
  gate: {python: "gate:wait", description: Waits until a file exists.}
agents:
  USER: {interrupt: ALWAYS}
  clerk: {provider: mock, functions: [gate]}
start: {from: USER, to: clerk}
"""
PARENT = """
roost: 1
name: parent
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: helper, arguments: {message: go}}]}
      - Done.
tools:
  helper: {flow: child.yaml}
agents:
  guest: {interrupt: ALWAYS}
  desk: {provider: mock, functions: [helper]}
start: {from: guest, to: desk, content: Hello.}
"""


def test_a_sub_flow_run_its_parents_step_drives_is_not_retried_or_sent_to(
    tmp_path: Path,
) -> None:
    """The server drives a sub-flow run inside its parent's step; a retry or a message
    for that child answers 409 (a retry used to run it a second time beside the parent)."""
    flows = write_flows(
        tmp_path / "flows", {"parent.yaml": PARENT, "child.yaml": CHILD, "gate.py": GATE}
    )
    server = start_server(tmp_path, flows=flows)
    try:
        api = server.client()
        parent = api.post("/runs", json={"flow": "parent.yaml"}).json()["id"]

        def child() -> str | None:
            rows = api.get("/runs", params={"status": "running"}).json()
            return next((r["id"] for r in rows if r["parent"] == parent), None)

        child_id = wait_for(child, 60)
        retried = api.post(f"/runs/{child_id}/retry")
        assert retried.status_code == 409, retried.text
        sent = api.post(f"/runs/{child_id}/messages", json={"content": "hi"})
        assert sent.status_code == 409, sent.text
        (tmp_path / "gate").write_text("open")
        settled(api, parent, "paused")
        events = api.get(f"/runs/{child_id}/events").json()
        assert [e["type"] for e in events].count("llm_call") == 2  # the child ran once
    finally:
        server.stop()
