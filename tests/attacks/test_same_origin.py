"""Other sites' pages against a ``roost serve`` that has no token (the default, on loopback).

A browser on this machine visits pages from anywhere, and each of them can
send requests to the server on 127.0.0.1: a page of a name re-pointed at
127.0.0.1 (DNS rebinding) reads the API as its own, a cross-site form or
``fetch`` starts runs, and a WebSocket (which no same-origin policy covers)
streams a run and answers its tool approvals. The server must answer only
requests naming it by its own names, and only its own page's commands. A
real server process each time; raw HTTP with forged headers, a WebSocket
with a foreign ``Origin``, and a real Chromium on another origin.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Browser, sync_playwright
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from tests.serve.conftest import FLOWS, Server, settled, start_server, wait_for, write_flows
from tests.visualize.conftest import CHROMIUM, CHROMIUM_ARGS

if TYPE_CHECKING:
    from collections.abc import Iterator

# The model asks to run a command that leaves a file behind; the run waits for a yes.
SHELL = """
roost: 1
name: shell
providers:
  script:
    kind: scripted
    replies:
      - tool_calls: [{name: builtin__shell, arguments: {command: "touch pwned"}}]
      - Done. TERMINATE
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  clerk: {provider: script, functions: [builtin#shell]}
start: {from: USER, to: clerk, content: Tidy up.}
"""

EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server without a token, its flows folder holding the shell flow too."""
    folder = tmp_path_factory.mktemp("same-origin")
    flows = write_flows(folder / "flows", {**FLOWS, "shell.yaml": SHELL})
    running = start_server(folder, flows=flows)
    yield running
    running.stop()


def port_of(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def raw(server: Server, method: str, path: str, headers: dict[str, str]) -> tuple[int, str]:
    """One HTTP/1.1 request written by hand (headers exactly as given); status and body."""
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
    lines += ["Content-Length: 0", "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=30) as sock:
        sock.sendall("\r\n".join(lines).encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def run_ids(server: Server) -> set[str]:
    return {row["id"] for row in server.client().get("/runs").json()}


def waiting_for_shell(server: Server) -> str:
    """A run of the shell flow, paused at the approval of ``touch pwned``."""
    run_id = str(server.client().post("/runs", json={"flow": "shell.yaml"}).json()["id"])
    detail = settled(server.client(), run_id, "paused")
    assert detail["waiting_for"]["reason"] == "tool_approval"
    return run_id


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:{port}", "127.0.0.1.x.io"])
def test_a_request_naming_another_host_is_refused(server: Server, host: str) -> None:
    for path in ("/runs", "/", "/flows"):
        status, body = raw(server, "GET", path, {"Host": host.format(port=port_of(server))})
        assert status == 403, (path, body)
        error = json.loads(body)
        assert error["kind"] == "forbidden"
        assert "answers only to localhost and 127.0.0.1" in error["error"]


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST", "127.0.0.2"])
def test_the_servers_own_names_are_served(server: Server, host: str) -> None:
    status, body = raw(server, "GET", "/runs", {"Host": host.format(port=port_of(server))})
    assert status == 200, body


def test_a_cross_site_post_starts_no_run(server: Server) -> None:
    before = run_ids(server)
    started = server.client().post("/runs", json={"flow": "chat.yaml"}, headers={"Origin": EVIL})
    assert started.status_code == 403, started.text
    assert "a page of http://evil.example may not act on this server" in started.json()["error"]
    # A page of the same host on another port is another origin too.
    other = f"http://127.0.0.1:{port_of(server) + 1}"
    refused = server.client().post("/runs", json={"flow": "chat.yaml"}, headers={"Origin": other})
    assert refused.status_code == 403
    assert run_ids(server) == before


def test_body_less_posts_from_another_site_are_refused_before_the_run_is_looked_at(
    server: Server,
) -> None:
    run_id = server.client().post("/runs", json={"flow": "slow.yaml"}).json()["id"]
    wait_for(lambda: server.client().get(f"/runs/{run_id}").json()["busy"])
    for action in ("cancel", "retry"):
        status, body = raw(
            server, "POST", f"/runs/{run_id}/{action}", {"Host": "127.0.0.1", "Origin": EVIL}
        )
        assert status == 403, (action, body)
    assert server.client().get(f"/runs/{run_id}").json()["busy"]  # the step goes on
    assert server.client().post(f"/runs/{run_id}/cancel").status_code == 200  # no Origin: curl


def test_a_websocket_of_another_site_neither_streams_nor_approves(server: Server) -> None:
    run_id = waiting_for_shell(server)
    url = f"{server.ws_url}/runs/{run_id}/ws"
    for origin in (EVIL, "null"):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=Origin(origin)).close()
        assert refused.value.response.status_code == 403
    approve = {"content": "yes"}
    sent = server.client().post(f"/runs/{run_id}/messages", json=approve, headers={"Origin": EVIL})
    assert sent.status_code == 403
    time.sleep(0.5)
    assert not (server.flows / "pwned").exists()
    assert settled(server.client(), run_id, "paused")["waiting_for"]["reason"] == "tool_approval"

    # The server's own page (its origin) answers over the same socket.
    with connect(url, origin=Origin(server.url)) as ws:
        ws.send(json.dumps({"type": "message", "content": "yes"}))
        wait_for(lambda: (server.flows / "pwned").exists())
    settled(server.client(), run_id, "terminated")
    (server.flows / "pwned").unlink()  # the next test of this server looks for it again


# ---------------------------------------------------------------------- a real browser


class _Site(http.server.BaseHTTPRequestHandler):
    """Another site on this machine: one page, whose script it is given."""

    script = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        page = f"<!DOCTYPE html><html><body><script>{self.script}</script></body></html>"
        body = page.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _attack(target: str, run_id: str) -> str:
    """A page's script: a form-like POST, a no-cors fetch, and a WebSocket that says yes."""
    return f"""
window.done = (async () => {{
  const said = [];
  try {{
    await fetch("{target}/runs", {{method: "POST", mode: "no-cors",
      headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{flow: "chat.yaml"}})}});
    said.push("fetch sent");
  }} catch (e) {{ said.push("fetch failed"); }}
  await new Promise((resolve) => {{
    const ws = new WebSocket("{target.replace("http", "ws")}/runs/{run_id}/ws");
    ws.onopen = () => {{
      said.push("ws open");
      ws.send(JSON.stringify({{type: "message", content: "yes"}}));
    }};
    ws.onmessage = (m) => said.push("ws got " + JSON.parse(m.data).type);
    ws.onerror = () => said.push("ws refused");
    ws.onclose = () => resolve();
    setTimeout(resolve, 5000);
  }});
  return said.join(", ");
}})();
"""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """A headless Chromium in which attacker.example resolves to 127.0.0.1, as a rebinding
    DNS server makes it do."""
    rebound = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP attacker.example 127.0.0.1"]
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=rebound, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def site() -> Iterator[type[_Site]]:
    handler = type("Site", (_Site,), {})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{httpd.server_address[1]}"  # type: ignore[attr-defined]
    yield handler
    httpd.shutdown()
    httpd.server_close()


def test_a_page_of_another_origin_in_chromium_gets_nothing_done(
    server: Server, site: type[_Site], chromium: Browser
) -> None:
    run_id = waiting_for_shell(server)
    before = run_ids(server)
    site.script = _attack(server.url, run_id)
    page = chromium.new_page()
    try:
        page.goto(site.url + "/")  # type: ignore[attr-defined]
        said = page.evaluate("window.done")
    finally:
        page.close()
    assert "ws open" not in said and "ws refused" in said, said
    assert run_ids(server) == before
    assert not (server.flows / "pwned").exists()
    assert settled(server.client(), run_id, "paused")["waiting_for"]["reason"] == "tool_approval"


def test_a_rebound_name_in_chromium_reads_nothing(server: Server, chromium: Browser) -> None:
    page = chromium.new_page()
    try:
        answer = page.goto(f"http://attacker.example:{port_of(server)}/runs")
        assert answer is not None and answer.status == 403
        assert "answers only to localhost" in page.content()
        # The same browser on the server's own name gets the page.
        own = page.goto(server.url + "/")
        assert own is not None and own.status == 200
    finally:
        page.close()
