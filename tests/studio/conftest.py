"""``roost studio`` as a real process on 127.0.0.1 over a folder of flows, and its clients."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from tests.serve.conftest import Server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_MAIN = "import sys; from roost.cli import main; main(sys.argv[1:])"

HELLO = """\
# yaml-language-server: $schema=../roost.schema.json
# A greeting, answered offline.
roost: 1
name: hello   # its name
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies: ["Hello!", TERMINATE]   # two replies

# who speaks
agents:
  USER: {role: A person.}
  bot:
    role: You greet.   # short
start: {from: USER, to: bot, content: Hi}
"""


def start_studio(folder: Path, flows: Path, *args: str, token: str | None = None) -> Server:
    """Starts ``roost studio FLOWS`` in ``folder`` and waits for the line naming its address."""
    log = folder / f"studio-{time.monotonic_ns()}.log"
    command = [sys.executable, "-c", _MAIN, "studio", str(flows), "--port", "0"]
    command += ["--db", str(folder / "runs.db"), *args]
    if token is not None:
        command += ["--token", token]
    process = subprocess.Popen(
        command,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        stdin=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ),
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 120)
    line = process.stdout.readline() if ready else ""
    if "listening on " not in line:
        process.kill()
        process.wait()
        raise AssertionError(f"roost studio did not start: {line!r} {log.read_text()}")
    url = line.split("listening on ", 1)[1].split()[0]
    return Server(process, url, token, log, flows)


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One studio for a module's tests, without a token, over a folder holding hello.yaml."""
    folder = tmp_path_factory.mktemp("studio")
    flows = folder / "flows"
    flows.mkdir()
    (flows / "hello.yaml").write_text(HELLO)
    running = start_studio(folder, flows)
    yield running
    running.stop()
