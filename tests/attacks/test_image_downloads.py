"""An image URL gets one deadline for its whole download, and downloads a pool of their own.

A server on 127.0.0.1 answers with a PNG's first bytes, then one more byte
every fraction of a second: every read is quick, so a per-read timeout never
fires. Before, ``roost run`` waited as long as the server kept trickling (the
docs promise 30 s), and eight such runs took every thread of the default pool
that ``roost serve`` does all its other blocking work in. Now the download is
cut at its deadline (made short here), and downloads run in a bounded pool of
their own.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from roost.engine import Runner
from roost.errors import FlowError
from roost.flow import load_flow_text
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.attacks.conftest import Cli

DEADLINE = 1.5  # seconds: the configured deadline of these tests (30 s by default)
FLOW = """\
roost: 1
name: look
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [seen]}
agents:
  USER: {interrupt: ALWAYS}
  viewer: {role: v}
start: {from: USER, to: viewer, content: What is it?, images: ["URL"]}
"""


class _Trickle(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # no length: the body ends when the connection does

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "image/png")
        self.end_headers()
        try:
            self.wfile.write(b"\x89PNG\r\n\x1a\n")
            for _ in range(40):  # bounded: at most 12 s, far past any deadline here
                self.wfile.flush()
                time.sleep(0.3)
                self.wfile.write(b"\x00")
        except OSError:  # the client hung up: what the test wants
            return


@pytest.fixture
def trickle() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/slow.png"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("roost.engine.images.FETCH_TIMEOUT", DEADLINE)


def test_a_trickling_image_server_is_cut_off_at_the_deadline(
    cli: Cli, tmp_path: Path, trickle: str
) -> None:
    (tmp_path / "look.yaml").write_text(FLOW.replace("URL", trickle))
    began = time.monotonic()
    said = cli("run", "look.yaml", "--db", "runs.db")
    took = time.monotonic() - began
    assert said.code == 2
    assert said.line.endswith(f"{trickle}: not fetched within {DEADLINE:g} s")
    assert took < DEADLINE + 3, took


async def test_slow_downloads_leave_the_default_pool_to_everything_else(trickle: str) -> None:
    # The default pool of a machine with four cores (min(32, cores + 4) threads).
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(8))
    slow = load_flow_text(FLOW.replace("URL", trickle), "look.yaml")
    starts = [
        asyncio.create_task(Runner(flow=slow, log=MemoryLog(f"r{n}")).start()) for n in range(8)
    ]
    await asyncio.sleep(0.3)  # every download under way
    began = time.monotonic()
    await asyncio.wait_for(asyncio.to_thread(time.sleep, 0), timeout=DEADLINE)
    plain = load_flow_text(FLOW.replace(', images: ["URL"]', ""), "plain.yaml")
    state = await asyncio.wait_for(Runner(flow=plain, log=MemoryLog("p")).start(), timeout=DEADLINE)
    assert state.status == "paused" and time.monotonic() - began < 1
    outcomes = await asyncio.gather(*starts, return_exceptions=True)
    assert all(isinstance(o, FlowError) and "not fetched within" in str(o) for o in outcomes)
