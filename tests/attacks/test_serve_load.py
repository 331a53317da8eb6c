"""Attacks on a real ``roost serve`` process through load and timing: a message that
comes too late for its run, many streams on one large run, a run another process
steps, and listings of many runs. After each, the server must still answer."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roost.store.schema import RUNS
from roost.store.sql import SqlStore
from tests.serve.conftest import settled, start_server, wait_for, write_flows

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
GATE = '''
import time
from pathlib import Path


def wait(path: str) -> str:
    """Waits until the file at PATH exists (two minutes at most)."""
    deadline = time.monotonic() + 120
    while not Path(path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return "open"
'''


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
            "ends.yaml": LAST_STEP.format(name="ends", last="      - Open. TERMINATE"),
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
                (tmp_path / "gate").write_text("open")
                notices = _notices(stream)
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


def _notices(stream: httpx2.Response) -> list[dict[str, Any]]:
    """The notices of an SSE stream, read until the stream says the run settled."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    for line in stream.iter_lines():
        if time.monotonic() > deadline:
            break
        if not line.startswith("data:"):
            continue
        item = json.loads(line.removeprefix("data:").strip())
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
