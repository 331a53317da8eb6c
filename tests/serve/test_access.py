"""Who may reach a server without a token: its own pages, and other origins only with ``--cors``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.serve.conftest import Server, start_server

if TYPE_CHECKING:
    from pathlib import Path


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
