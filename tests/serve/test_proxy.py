"""docs/deploying.md's nginx configuration, run as written, in front of two real workers.

The ``nginx`` block of the page is read from the page itself; only what a test
machine must change is replaced (the workers' ports, the listening ports, the
certificate's paths), each replacement checked to have matched, so the page and
this test cannot drift apart. nginx ends TLS with a certificate of the tests'
own authority; two ``roost serve`` workers share one PostgreSQL behind it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from fakes.tls import Certificates, make_certificates
from websockets.sync.client import connect

from tests.docs_blocks import page
from tests.serve.conftest import TOKEN, Server, settled, sse_items, start_server, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def documented_config() -> str:
    """The one ``nginx`` block of docs/deploying.md."""
    found = [block.text for block in page("deploying.md") if block.lang == "nginx"]
    assert len(found) == 1, "docs/deploying.md should show one nginx configuration"
    return found[0]


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, f"docs/deploying.md's nginx block no longer has {old!r}"
    return text.replace(old, new)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Proxy:
    """nginx, run from a folder of its own, with the page's server blocks."""

    process: subprocess.Popen[bytes]
    https: str
    http: str
    certificates: Certificates
    errors: Path

    def client(self, token: str | None = TOKEN) -> httpx2.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        context = self.certificates.context()
        return httpx2.Client(base_url=self.https, headers=headers, timeout=30, verify=context)


def proxy_config(folder: Path, ports: tuple[int, int], https: int, http: int) -> Path:
    """nginx.conf for this machine: the page's blocks inside a main context of our own."""
    certificates_at = folder / "server"
    text = documented_config()
    text = replaced(text, "server 127.0.0.1:8001 ", f"server 127.0.0.1:{ports[0]} ")
    text = replaced(text, "server 127.0.0.1:8002 ", f"server 127.0.0.1:{ports[1]} ")
    text = replaced(text, "listen 443 ssl;", f"listen 127.0.0.1:{https} ssl;")
    text = replaced(text, "listen 80;", f"listen 127.0.0.1:{http};")
    text = replaced(
        text, "/etc/letsencrypt/live/roost.example.org/fullchain.pem", f"{certificates_at}.pem"
    )
    text = replaced(
        text, "/etc/letsencrypt/live/roost.example.org/privkey.pem", f"{certificates_at}.key"
    )
    (folder / "roost.conf").write_text(text, encoding="utf-8")
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir()
    # nginx started by root runs its workers as nobody unless told otherwise; the
    # certificates and temporary folders here are root's alone.
    user = "user root;\n" if os.geteuid() == 0 else ""
    main = f"""{user}daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {folder}/roost.conf;
}}
"""
    path = folder / "nginx.conf"
    path.write_text(main, encoding="utf-8")
    return path


def start_proxy(folder: Path, workers: tuple[Server, Server]) -> Proxy:
    folder.mkdir()
    certificates = make_certificates(folder)
    ports = tuple(int(w.url.rsplit(":", 1)[1]) for w in workers)
    https, http = free_port(), free_port()
    config = proxy_config(folder, (ports[0], ports[1]), https, http)
    where = ["-p", str(folder), "-e", str(folder / "error.log"), "-c", str(config)]
    checked = subprocess.run([NGINX, "-t", "-q", *where], capture_output=True, text=True)
    assert checked.returncode == 0, f"nginx -t: {checked.stderr}"
    process = subprocess.Popen(
        [NGINX, *where],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    proxy = Proxy(process, f"https://127.0.0.1:{https}", f"http://127.0.0.1:{http}", certificates,
                  folder / "error.log")  # fmt: skip
    with proxy.client(token=None) as client:
        wait_for(lambda: _answers(client), timeout=60)
    return proxy


def _answers(client: httpx2.Client) -> bool:
    try:
        return client.get("/health").status_code == 200
    except httpx2.TransportError:
        return False


@pytest.fixture
def deployed(tmp_path: Path, pg_url: str) -> Iterator[tuple[Proxy, Server, Server]]:
    """Two workers on one PostgreSQL with a token, and nginx in front of them."""
    first = start_server(tmp_path, db=pg_url, token=TOKEN)
    second = start_server(tmp_path, db=pg_url, token=TOKEN, flows=first.flows)
    proxy = start_proxy(tmp_path / "nginx", (first, second))
    try:
        yield proxy, first, second
    finally:
        proxy.process.send_signal(signal.SIGQUIT)  # nginx's graceful stop
        try:
            proxy.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proxy.process.kill()
            proxy.process.wait()
        (tmp_path / "gate").touch()  # no tool thread is left waiting
        for worker in (first, second):
            worker.stop()
            assert "Traceback" not in worker.errors(), worker.errors()


def paused_run(client: httpx2.Client, flow: str = "chat.yaml") -> str:
    made = client.post("/runs", json={"flow": flow})
    assert made.status_code == 201, made.text
    run_id: str = made.json()["id"]
    settled(client, run_id, "paused")
    return run_id


def test_https_through_the_proxy_keeps_the_token_and_the_probes_open(
    deployed: tuple[Proxy, Server, Server],
) -> None:
    proxy, _, _ = deployed
    with proxy.client(token=None) as anonymous, proxy.client() as api:
        assert anonymous.get("/ready").json()["status"] == "ready"
        refused = anonymous.get("/runs")
        assert refused.status_code == 401
        run_id = paused_run(api)
        assert api.get(f"/runs/{run_id}").json()["status"] == "paused"
    plain = httpx2.get(f"{proxy.http}/runs?limit=1", follow_redirects=False, timeout=30)
    assert plain.status_code == 301
    assert plain.headers["location"] == "https://127.0.0.1/runs?limit=1"
    assert TOKEN not in proxy.errors.read_text(encoding="utf-8")


def test_server_sent_events_pass_through_as_the_run_goes_on(
    deployed: tuple[Proxy, Server, Server],
) -> None:
    proxy, _, _ = deployed
    with proxy.client() as api, proxy.client() as other:
        run_id = paused_run(api)
        shown: list[int] = []  # the next seq of the state the stream began with

        def read(item: dict[str, Any]) -> bool:
            if item.get("type") == "state" and not shown:
                # The stream has shown the run so far and stays open: the answer sent now
                # must come through it, event by event, before it ends.
                shown.append(item["next_seq"])
                sent = other.post(f"/runs/{run_id}/messages", json={"content": "Four of us."})
                assert sent.status_code == 202, sent.text
                return False
            event = item.get("event") or {}
            return bool(shown) and event.get("type") == "interrupt" and event["seq"] > shown[0]

        items = sse_items(api, f"/runs/{run_id}/stream", until=read, timeout=60)
        said = [i["event"]["content"] for i in items
                if i.get("type") == "event" and i["event"]["type"] == "message"
                and i["event"]["seq"] >= shown[0]]  # fmt: skip
        assert said == ["Four of us.", "Noted."]


def test_websockets_pass_through_the_proxy_over_tls(
    deployed: tuple[Proxy, Server, Server],
) -> None:
    proxy, _, _ = deployed
    with proxy.client() as api:
        run_id = paused_run(api)
    url = proxy.https.replace("https://", "wss://") + f"/runs/{run_id}/ws"
    context = proxy.certificates.context()
    with connect(url, ssl=context, subprotocols=["roost", f"bearer.{TOKEN}"]) as ws:  # type: ignore[list-item]
        assert ws.subprotocol == "roost"
        items = [json.loads(ws.recv(timeout=30))]
        while items[-1]["type"] != "state":
            items.append(json.loads(ws.recv(timeout=30)))
        ws.send(json.dumps({"type": "message", "content": "Four of us."}))
        said: list[str] = []
        while "Noted." not in said:
            item = json.loads(ws.recv(timeout=30))
            if item["type"] == "event" and item["event"]["type"] == "message":
                said.append(item["event"]["content"])
        assert said == ["Four of us.", "Noted."]


def test_a_draining_worker_hands_its_traffic_and_runs_to_the_other(
    deployed: tuple[Proxy, Server, Server], tmp_path: Path
) -> None:
    # The page's rolling restart: SIGTERM to one worker with a step in flight. It
    # answers 503 to new work; the proxy sends what it may repeat to the other, a
    # client resends what the proxy may not, and the run goes on on the other worker.
    proxy, first, second = deployed
    direct = first.client()
    gated = direct.post("/runs", json={"flow": "gated.yaml"}).json()["id"]
    wait_for(lambda: direct.get(f"/runs/{gated}").json()["busy"])
    earlier = paused_run(second.client())
    first.process.send_signal(signal.SIGTERM)
    wait_for(lambda: direct.get("/ready").status_code == 503)
    with proxy.client(token=None) as anonymous, proxy.client() as api:
        # Round robin: every other request reaches the draining worker first.
        assert [anonymous.get("/ready").status_code for _ in range(6)] == [200] * 6
        assert [api.get(f"/runs/{earlier}").status_code for _ in range(6)] == [200] * 6
        started = resent_until_taken(api, {"flow": "chat.yaml"})
        settled(api, started, "paused")
        (tmp_path / "gate").touch()
        assert first.process.wait(timeout=60) == 0
        detail = settled(api, gated, "paused")
        assert detail["answer"] == "The gate is open."
        sent = api.post(f"/runs/{gated}/messages", json={"content": "Thanks."})
        assert sent.status_code == 202, sent.text
        wait_for(lambda: api.get(f"/runs/{gated}").json()["messages"] >= 4)


def resent_until_taken(api: httpx2.Client, body: dict[str, str]) -> str:
    """POST /runs, sent again after Retry-After while a draining worker refuses it."""
    deadline = time.monotonic() + 60
    while True:
        made = api.post("/runs", json=body)
        if made.status_code == 201:
            run_id: str = made.json()["id"]
            return run_id
        assert made.status_code == 503 and made.headers["retry-after"] == "5", made.text
        assert time.monotonic() < deadline, "no worker took the run"
        time.sleep(0.2)  # the test does not wait the advised 5 s; the other worker is ready
