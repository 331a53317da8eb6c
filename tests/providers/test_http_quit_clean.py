"""Leaving roost after real HTTP calls prints nothing on stderr: clients and generators closed.

The fake server keeps connections alive (HTTP/1.1), as real services do: a
client left open then holds a socket when the process ends, and an SDK's
stream generator left to the garbage collector is finalized on a loop that
is already closed ("Task was destroyed but it is pending!").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import Broken, Reply

from .conftest import API_KEY

if TYPE_CHECKING:
    from collections.abc import Iterator

DATA = Path(__file__).parent / "data"
_MAIN = "import sys; from roost.cli import main; main(sys.argv[1:])"


@pytest.fixture
def alive() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(keep_alive=True) as fake:
        yield fake


def roost(tmp_path: Path, fake: FakeLLMServer, *args: str, lines: str = "") -> str:
    """stderr of ``roost ARGS`` with Python's warnings on, given ``lines`` as input."""
    env = {
        **os.environ,
        "FAKE_LLM_URL": fake.url,
        "FAKE_LLM_KEY": API_KEY,
        "ROOST_DB": f"sqlite:///{tmp_path / 'runs.db'}",
        "PYTHONWARNINGS": "default",  # ResourceWarning (an unclosed socket) is shown
    }
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *args],
        cwd=tmp_path,
        env=env,
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stderr


def flow(tmp_path: Path, provider: str, *, start: bool) -> str:
    text = (DATA / "adder.yaml").read_text().replace("provider: PROVIDER", f"provider: {provider}")
    if not start:
        text = "\n".join(line for line in text.splitlines() if not line.startswith("start:"))
    (tmp_path / "adder.yaml").write_text(text)
    shutil.copy(DATA / "calc.py", tmp_path / "calc.py")
    return "adder.yaml"


@pytest.mark.parametrize("provider", ["chat", "responses", "claude"])
def test_quitting_a_chat_leaves_no_pending_task_or_open_socket(
    provider: str, tmp_path: Path, alive: FakeLLMServer
) -> None:
    alive.script(Reply(text="Hello there"), Reply(text="Bye"))
    path = flow(tmp_path, provider, start=False)
    stderr = roost(
        tmp_path,
        alive,
        "chat",
        path,
        "--from",
        "USER",
        "--to",
        "adder",
        lines="hi\nthanks\n/quit\n",
    )
    assert alive.remaining == 0
    assert stderr == ""


def test_a_run_ends_with_its_connections_closed(tmp_path: Path, alive: FakeLLMServer) -> None:
    alive.script(Reply(text="Hello there"))
    stderr = roost(tmp_path, alive, "run", flow(tmp_path, "chat", start=True), "--no-input")
    assert alive.remaining == 0
    assert stderr == ""


@pytest.mark.parametrize("provider", ["chat", "responses", "claude"])
def test_a_stream_abandoned_at_an_error_event_is_closed_too(
    provider: str, tmp_path: Path, alive: FakeLLMServer
) -> None:
    """roost stops reading at the error event: the rest of the stream is closed, not left."""
    answer = Reply(text="Hello there")
    alive.script(Broken(answer, after=1, how="error"), answer)
    stderr = roost(tmp_path, alive, "run", flow(tmp_path, provider, start=True), "--no-input")
    assert alive.remaining == 0 and len(alive.requests) == 2
    assert stderr == ""
