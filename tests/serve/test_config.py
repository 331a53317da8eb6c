"""The checks ``roost serve`` makes before it listens: a token beyond loopback, good settings."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.serve.conftest import _MAIN, TOKEN, start_server, write_flows

if TYPE_CHECKING:
    from pathlib import Path


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
