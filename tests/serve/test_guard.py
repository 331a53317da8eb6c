"""What every request passes first: a bearer token when the server has any (but for ``/health``),
and a body within the limit."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.serve.conftest import TOKEN, Server, start_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx2


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


def test_an_oversized_body_is_refused_before_it_is_read(api: httpx2.Client) -> None:
    content = "x" * (2**20 + 10)
    answer = api.post("/runs", json={"flow": "chat.yaml", "message": content})
    assert answer.status_code == 413
    assert answer.json() == {
        "error": "the request body is over the server's limit of 1048576 bytes",
        "kind": "too_large",
    }


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
