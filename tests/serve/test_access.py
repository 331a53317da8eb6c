"""Bearer tokens: every endpoint but ``/health`` (and the page) needs one when the server has any;
no token means loopback only."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.serve.conftest import _MAIN, TOKEN, Server, start_server, write_flows

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

OTHER = "another-token-of-the-serve-tests"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that knows TOKEN (given on the command line) and OTHER (by its digest)."""
    digest = hashlib.sha256(OTHER.encode()).hexdigest()
    running = start_server(
        tmp_path_factory.mktemp("guarded"), token=TOKEN, env={"ROOST_TOKENS": f"sha256:{digest}"}
    )
    yield running
    running.stop()


def test_without_a_token_every_endpoint_answers_401(guarded: Server) -> None:
    api = guarded.client(token=None)
    for method, path in [
        ("GET", "/flows"),
        ("POST", "/flows/validate"),
        ("GET", "/runs"),
        ("POST", "/runs"),
        ("GET", "/runs/some-run"),
        ("GET", "/runs/some-run/events"),
        ("GET", "/runs/some-run/stream"),
        ("POST", "/runs/some-run/messages"),
        ("POST", "/runs/some-run/cancel"),
        ("GET", "/no/such/endpoint"),
    ]:
        answer = api.request(method, path)
        assert answer.status_code == 401, (path, answer.text)
        assert answer.json() == {
            "error": "this server needs a token: send the header Authorization: Bearer TOKEN",
            "kind": "unauthorized",
        }
        assert answer.headers["www-authenticate"] == "Bearer"


def test_a_wrong_token_is_refused_and_health_is_open(guarded: Server) -> None:
    assert guarded.client(token="not-a-token-this-server-knows").get("/runs").status_code == 401
    health = guarded.client(token=None).get("/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"


def test_a_token_from_the_command_line_or_from_roost_tokens_gets_in(guarded: Server) -> None:
    assert guarded.client(token=TOKEN).get("/runs").status_code == 200
    # OTHER reached the server only as its SHA-256 digest in ROOST_TOKENS.
    started = guarded.client(token=OTHER).post("/runs", json={"flow": "chat.yaml"})
    assert started.status_code == 201, started.text


def test_the_websocket_takes_the_token_as_a_subprotocol(guarded: Server) -> None:
    run_id = guarded.client().post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    url = f"{guarded.ws_url}/runs/{run_id}/ws"
    with pytest.raises(InvalidStatus) as refused:
        connect(url).close()
    assert refused.value.response.status_code == 403
    with connect(url, subprotocols=["roost", f"bearer.{TOKEN}"]) as socket:  # type: ignore[list-item]
        assert socket.subprotocol == "roost"
        first = json.loads(socket.recv(timeout=30))
        assert first["type"] == "event" and first["event"]["type"] == "run_start"


def test_no_token_is_written_to_the_log_or_the_store(guarded: Server) -> None:
    guarded.client(token="a-wrong-token-that-must-not-leak").get("/runs")
    folder = guarded.flows.parent
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix != ".py":
            data = path.read_bytes()
            assert TOKEN.encode() not in data and OTHER.encode() not in data, path
            assert b"a-wrong-token-that-must-not-leak" not in data, path


def serve_fails(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """The one line ``roost serve ARGS`` prints when it refuses to start."""
    flows = write_flows(tmp_path / "flows")
    environment = {k: v for k, v in os.environ.items() if k != "ROOST_TOKENS"}
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, "serve", "--flows", str(flows), "--port", "0", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**environment, **(env or {})},
    )
    assert done.returncode == 2, done
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "example.com"])
def test_a_server_beyond_loopback_needs_a_token(tmp_path: Path, host: str) -> None:
    assert serve_fails(tmp_path, "--host", host) == (
        f"--host {host} can be reached from other machines: give a token with "
        "--token or ROOST_TOKENS, so that only those who hold one get in"
    )


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (["--token", "short"], None, "a token must have at least 16 characters"),
        ([], {"ROOST_TOKENS": "sha256:abc"}, "a token given as sha256:HEX needs 64 hexadecimal"),
        (["--flows", "nowhere"], None, "--flows nowhere: no such folder"),
    ],
)
def test_bad_settings_are_one_line(
    tmp_path: Path, args: list[str], env: dict[str, str] | None, line: str
) -> None:
    assert serve_fails(tmp_path, *args, env=env).startswith(line)


def test_the_server_listens_beyond_loopback_with_a_token(tmp_path: Path) -> None:
    running = start_server(tmp_path, "--host", "0.0.0.0", token=TOKEN)
    try:
        assert running.url.startswith("http://0.0.0.0:")
        port = running.url.rsplit(":", 1)[1]
        api = running.client()
        api.base_url = f"http://127.0.0.1:{port}"  # type: ignore[assignment]
        assert api.get("/runs").status_code == 200
    finally:
        running.stop()


def test_cors_is_off_unless_an_origin_is_given(server: Server, tmp_path: Path) -> None:
    asked = {"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"}
    answer = server.client().options("/runs", headers=asked)
    assert "access-control-allow-origin" not in answer.headers
    allowed = start_server(tmp_path, "--cors", "https://elsewhere.example")
    try:
        answer = allowed.client().options("/runs", headers=asked)
        assert answer.headers["access-control-allow-origin"] == "https://elsewhere.example"
    finally:
        allowed.stop()
