"""``roost studio [DIR]``: the server's access rules, and the page opened for a person only."""

from __future__ import annotations

import os
import pty
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from tests.cli_process import run_cli
from tests.studio.conftest import HELLO, start_studio

if TYPE_CHECKING:
    from pathlib import Path

TOKEN = "tok-" + "studio-secret-for-tests"
_MAIN = "import sys; from roost.cli import main; main(sys.argv[1:])"


def _folder(tmp_path: Path) -> Path:
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / "hello.yaml").write_text(HELLO)
    return flows


def test_beyond_loopback_without_a_token_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run_cli("studio", str(_folder(tmp_path)), "--host", "0.0.0.0", cwd=tmp_path)
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1
    assert "token" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    done = run_cli("studio", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert done.returncode != 0
    assert "nowhere" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_a_token_every_studio_request_needs_it(tmp_path: Path) -> None:
    studio = start_studio(tmp_path, _folder(tmp_path), token=TOKEN)
    try:
        assert studio.client(token=None).get("/flows/hello.yaml").status_code == 401
        assert studio.client().get("/flows/hello.yaml").json()["text"] == HELLO
    finally:
        studio.stop()


def _opener(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "opener.sh"
    script.write_text('#!/bin/sh\necho "$1" > "$(dirname "$0")/opened"\n')
    script.chmod(0o755)
    return {**os.environ, "BROWSER": f"{script} %s"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_page_opens_when_run_from_a_terminal(tmp_path: Path) -> None:
    flows, port = _folder(tmp_path), _free_port()
    command = [sys.executable, "-c", _MAIN, "studio", str(flows), "--port", str(port)]
    command += ["--db", str(tmp_path / "runs.db")]
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, cwd=tmp_path, stdout=follower, stderr=follower, env=_opener(tmp_path)
    )
    os.close(follower)
    try:
        opened = tmp_path / "opened"
        deadline = time.monotonic() + 60
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.read_text().strip() == f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        process.wait(timeout=20)
        os.close(leader)


def test_the_page_does_not_open_without_a_terminal(tmp_path: Path) -> None:
    flows, port = _folder(tmp_path), _free_port()
    command = [sys.executable, "-c", _MAIN, "studio", str(flows), "--port", str(port)]
    command += ["--db", str(tmp_path / "runs.db")]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        env=_opener(tmp_path),
    )
    try:
        assert process.stdout is not None
        assert "listening on" in process.stdout.readline()
        time.sleep(1.5)  # past the moment a terminal's page would open
        assert not (tmp_path / "opened").exists()
    finally:
        process.terminate()
        process.wait(timeout=20)
