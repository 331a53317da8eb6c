"""``roost serve`` keeps memory in its store: served runs remember what others stored.

A served run recalls what a ``roost run`` stored in the same store, and a run
of the command line recalls what a served run stored; on PostgreSQL, what one
worker's run stores, a run on another worker recalls.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tests.cli_inprocess import run_cli
from tests.serve.conftest import contents, start_server, wait_for, write_flows

if TYPE_CHECKING:
    from pathlib import Path

    import httpx2

    from tests.serve.conftest import Server


def tell(key: str, content: str) -> str:
    """A flow whose host stores ``content`` under ``key`` in the memory shared as "guests"."""
    return f"""\
roost: 1
name: tell-{key}
memory: {{scope: guests}}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - name: memory__store
            arguments: {{key: {key}, content: "{content}", importance: 0.9}}
      - Noted. TERMINATE
agents:
  guest: {{provider: script}}
  host: {{provider: script, functions: [memory#store]}}
start: {{from: guest, to: host, content: "Remember this."}}
"""


# Its model repeats what it is sent: the reply shows what was recalled.
ASK = """\
roost: 1
name: ask
memory: {scope: guests}
providers:
  echo: {kind: scripted, replies: [{echo: last}]}
agents:
  guest: {interrupt: ALWAYS}
  host: {provider: echo}
start: {from: guest, to: host, content: "What does the guest drink, and where do they live?"}
"""

RESTING = ("terminated", "paused", "error")
FLOWS = {
    "tea.yaml": tell("tea", "The guest drinks green tea."),
    "city.yaml": tell("city", "The guest lives in Lyon."),
    "ask.yaml": ASK,
}


def served(client: httpx2.Client, flow: str, status: str) -> str:
    """The last message of a served run of ``flow``, which must come to rest in ``status``."""
    answer = client.post("/runs", json={"flow": flow})
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["id"]

    def rested() -> dict[str, Any] | None:
        detail: dict[str, Any] = client.get(f"/runs/{run_id}").json()
        done = detail["status"] in RESTING and not detail["busy"] and not detail["queued"]
        return detail if done else None

    detail = wait_for(rested)
    assert detail["status"] == status, (detail, contents(client, run_id))
    return contents(client, run_id)[-1][2]


def check_clean(server: Server) -> None:
    server.stop()
    assert "Traceback" not in server.errors(), server.errors()


def test_served_runs_and_command_line_runs_share_the_stores_memory(tmp_path: Path) -> None:
    flows = write_flows(tmp_path / "flows", FLOWS)
    db = str(tmp_path / "runs.db")
    env = {**os.environ, "ROOST_DB": db}
    assert run_cli("run", "flows/tea.yaml", cwd=tmp_path, env=env).returncode == 0
    server = start_server(tmp_path, flows=flows, db=db)
    try:
        client = server.client()
        assert served(client, "city.yaml", "terminated") == "Noted. TERMINATE"
        recalled = served(client, "ask.yaml", "paused")
    finally:
        check_clean(server)
    assert "- tea: The guest drinks green tea." in recalled  # stored by the command line
    assert "- city: The guest lives in Lyon." in recalled  # stored by a served run
    asked = run_cli("run", "flows/ask.yaml", "--no-input", cwd=tmp_path, env=env)
    assert "- city: The guest lives in Lyon." in asked.stdout


def test_on_postgresql_one_workers_run_recalls_what_anothers_stored(
    tmp_path: Path, pg_url: str
) -> None:
    flows = write_flows(tmp_path / "flows", FLOWS)
    first = start_server(tmp_path, flows=flows, db=pg_url)
    second = start_server(tmp_path, flows=flows, db=pg_url)
    try:
        assert served(first.client(), "tea.yaml", "terminated") == "Noted. TERMINATE"
        recalled = served(second.client(), "ask.yaml", "paused")
    finally:
        check_clean(first)
        check_clean(second)
    assert "- tea: The guest drinks green tea." in recalled
