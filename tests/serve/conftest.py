"""``roost serve`` as a real process on 127.0.0.1, and clients for its API and streams.

Each server gets a folder of flows (``FLOWS`` below), its own SQLite store
unless given ``--db``, and a free port; its first line on stdout names the
address it listens on.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from roost.events import InterruptEvent
from tests.store.conftest import pg_server, pg_url  # noqa: F401 - fixtures for the worker tests

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

_MAIN = "import sys; from roost.cli import main; main(sys.argv[1:])"
TOKEN = "tok-" + "s3cret-for-the-serve-tests"

CHAT = """
roost: 1
name: chat
description: A person and a bot; the person is asked at every turn.
defaults: {provider: mock, max_rounds: 20}
providers:
  mock:
    kind: scripted
    replies: ["Hello! How can I help?", "Noted.", "Noted again.", "Bye."]
    when_exhausted: repeat_last
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  bot: {role: You help.}
start: {from: USER, to: bot, content: Hi}
"""

HELLO = """
roost: 1
name: hello
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: ["Hello!", "TERMINATE"]}
agents:
  USER: {role: A person.}
  bot: {role: You greet.}
start: {from: USER, to: bot, content: Hi}
"""

APPROVE = """
roost: 1
name: approve
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: mean, arguments: {data: [2, 4, 9]}}]}
      - The mean is 5.
      - TERMINATE
tools:
  mean: {python: "statistics:fmean", description: The mean of some numbers., approval: always}
agents:
  USER: {role: A person with numbers.}
  helper: {role: You answer with your tools., functions: [mean]}
start: {from: USER, to: helper, content: "What is the mean of 2, 4 and 9?"}
"""

# The helper waits in a tool for as long as it is asked to, then answers.
SLOW = """
roost: 1
name: slow
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: wait, arguments: {delay: 600}}]}
      - I stopped waiting.
      - TERMINATE
tools:
  wait: {python: "asyncio:sleep", description: Waits DELAY seconds.}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  helper: {role: You wait when asked., functions: [wait]}
start: {from: USER, to: helper, content: Wait ten minutes.}
"""

TEAM = """
roost: 1
name: team
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies: ["I write.", "I review.", "TERMINATE"]
    when_exhausted: repeat_last
agents:
  USER: {role: A person.}
  writer: {role: You write.}
  critic: {role: You review.}
channels:
  room:
    members: [writer, critic]
    max_rounds: 3
    director: {strategy: manual}
start: {from: USER, to: room, content: Write a line.}
"""

# The helper's tool waits until the file ``gate`` appears in the server's folder.
GATED = """
roost: 1
name: gated
defaults: {provider: mock, max_rounds: 20}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: gate, arguments: {path: gate}}]}
      - The gate is open.
    when_exhausted: repeat_last
tools:
  gate: {python: "gate:wait", description: Waits until a file exists.}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  helper: {role: You wait when asked., functions: [gate]}
start: {from: USER, to: helper, content: Wait for the gate.}
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

BROKEN = """
roost: 1
name: broken
agents:
  bot: {role: 7, provider: nowhere}
"""

FLOWS = {
    "chat.yaml": CHAT,
    "hello.yaml": HELLO,
    "approve.yaml": APPROVE,
    "slow.yaml": SLOW,
    "team/room.yaml": TEAM,
    "broken.yaml": BROKEN,
    "gated.yaml": GATED,
    "gate.py": GATE,
}

# A person and a bot whose model (the fake LLM server at {url}) has a price in roost's table.
PRICED = """
roost: 1
name: priced
providers:
  llm: {{kind: openai, model: gpt-4o-mini, base_url: "{url}/v1", api_key: k, max_retries: 0}}
agents:
  USER: {{role: A person., interrupt: ALWAYS}}
  bot: {{provider: llm, role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def fake_served(fake_url: str, name: str) -> str:
    """The head of a flow whose default provider is the fake LLM server at ``fake_url``."""
    return f"""
roost: 1
name: {name}
providers:
  llm: {{kind: openai, model: m, base_url: "{fake_url}/v1", api_key: sk-test, max_retries: 0}}
defaults: {{provider: llm}}
"""


def write_flows(folder: Path, flows: dict[str, str] | None = None) -> Path:
    for name, text in (flows or FLOWS).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


@dataclass
class Server:
    """A running ``roost serve`` process."""

    process: subprocess.Popen[str]
    url: str
    token: str | None
    log: Path
    flows: Path
    clients: list[httpx2.Client] = field(default_factory=list)

    def client(self, token: str | None = ..., timeout: float = 30.0) -> httpx2.Client:  # type: ignore[assignment]
        """An HTTP client for the API; with the server's token unless another (or None) is given."""
        used = self.token if token is ... else token
        headers = {"Authorization": f"Bearer {used}"} if used else {}
        made = httpx2.Client(base_url=self.url, headers=headers, timeout=timeout)
        self.clients.append(made)
        return made

    @property
    def ws_url(self) -> str:
        return "ws" + self.url.removeprefix("http")

    def stop(self) -> int:
        for made in self.clients:
            made.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def errors(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start_server(
    folder: Path,
    *args: str,
    flows: Path | None = None,
    db: str | None = None,
    token: str | None = None,
    env: dict[str, str] | None = None,
) -> Server:
    """Starts ``roost serve`` in ``folder`` and waits for the line naming its address."""
    flows = flows if flows is not None else write_flows(folder / "flows")
    log = folder / f"serve-{time.monotonic_ns()}.log"
    command = [sys.executable, "-c", _MAIN, "serve", "--port", "0", "--flows", str(flows)]
    command += ["--db", db or str(folder / "runs.db"), *args]
    if token is not None:
        command += ["--token", token]
    environment = {**os.environ, **(env or {})}
    process = subprocess.Popen(
        command,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        stdin=subprocess.DEVNULL,
        text=True,
        env=environment,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 120)
    line = process.stdout.readline() if ready else ""
    if "listening on " not in line:
        process.kill()
        process.wait()
        raise AssertionError(f"roost serve did not start: {line!r} {log.read_text()}")
    url = line.split("listening on ", 1)[1].split()[0]
    return Server(process, url, token, log, flows)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for a module's tests, without a token."""
    running = start_server(tmp_path_factory.mktemp("serve"))
    yield running
    running.stop()


@pytest.fixture
def api(server: Server) -> httpx2.Client:
    return server.client()


# ---------------------------------------------------------------------- streams


def sse_items(
    client: httpx2.Client,
    path: str,
    *,
    until: Callable[[dict[str, Any]], bool] | None = None,
    timeout: float = 30.0,
    raw: list[tuple[str, str, str | None]] | None = None,
) -> list[dict[str, Any]]:
    """The items of a Server-Sent Events stream until ``until`` holds or the stream ends.

    ``raw`` collects each message's (event, data, id) as sent.
    """
    items: list[dict[str, Any]] = []
    with client.stream("GET", path, timeout=timeout) as response:
        assert response.status_code == 200, response.read()
        event, data, ident = "message", [], None
        for line in response.iter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "event":
                    event = value
                elif name == "data":
                    data.append(value)
                elif name == "id":
                    ident = value
                continue
            if not data:
                continue
            item = json.loads("\n".join(data))
            if raw is not None:
                raw.append((event, "\n".join(data), ident))
            items.append(item)
            event, data, ident = "message", [], None
            if until is not None and until(item):
                break
    return items


def wait_for(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Polls ``check`` until it gives something true; its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {check}")
        time.sleep(0.05)


def run_status(client: httpx2.Client, run_id: str) -> str:
    return str(client.get(f"/runs/{run_id}").json()["status"])


def settled(client: httpx2.Client, run_id: str, status: str) -> dict[str, Any]:
    """The run's detail once it is in ``status`` with no step running and nothing queued."""

    def check() -> dict[str, Any] | None:
        detail: dict[str, Any] = client.get(f"/runs/{run_id}").json()
        done = detail["status"] == status and not detail["busy"] and not detail["queued"]
        return detail if done else None

    found: dict[str, Any] = wait_for(check)
    return found


def contents(client: httpx2.Client, run_id: str) -> list[tuple[str, str, str]]:
    """(from, to, content) of the run's messages."""
    events = client.get(f"/runs/{run_id}/events").json()
    return [(e["from"], e["to"], e["content"]) for e in events if e["type"] == "message"]


def paused(reason: str | None) -> InterruptEvent:
    """A run paused for USER: a person's turn (None), an approval, a plan or a choice."""
    return InterruptEvent.model_validate(
        {"seq": 3, "run": "r", "ts": "t", "from": "USER", "to": "a", "reason": reason}
    )
