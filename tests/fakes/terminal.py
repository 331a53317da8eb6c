"""A roost command in a pseudo-terminal: what a person at a terminal sees, and what they type."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

# How long to wait for what a terminal should show; reached only when a test fails.
PATIENCE = float(os.environ.get("ROOST_TEST_PATIENCE", "240"))


CODE = "import sys; from roost.cli import main; main(sys.argv[1:])"


def read_until(fd: int, marker: str, timeout: float = 240.0) -> str:
    """Terminal output until ``marker`` appears (or the timeout)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    return seen


def spawn(
    args: list[str], cwd: Path, extra_env: Mapping[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm", **(extra_env or {})}
    process = subprocess.Popen(
        [sys.executable, "-c", CODE, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    return process, master


def plain(shown: str) -> str:
    """Terminal output as a person reads it: no colour codes, no carriage returns."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "")


class Terminal:
    """A roost command in a pseudo-terminal, read as plain text."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.process, self.fd = spawn(args, cwd, env)
        self.raw = ""

    @property
    def text(self) -> str:
        return plain(self.raw)

    def wait_for(self, marker: str, times: int = 1, timeout: float = PATIENCE) -> str:
        """The plain output once ``marker`` has appeared ``times`` times (or the timeout)."""
        deadline = time.monotonic() + timeout
        while self.text.count(marker) < times and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    self.raw += os.read(self.fd, 4096).decode(errors="replace")
                except OSError:
                    break
        return self.text

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def finish(self) -> str:
        """Waits for the command to end; the plain output."""
        code = self.process.wait(timeout=PATIENCE)
        self.wait_for("\x00never\x00", timeout=1)  # what is left to read
        self.close()
        assert code in (0, 3), self.text
        return self.text

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.fd)


def chat_with(folder: Path, name: str, text: str) -> Terminal:
    """``roost chat`` in a terminal, on a flow file ``name`` holding ``text``."""
    flow = folder / name
    flow.write_text(text)
    return Terminal(["chat", str(flow)], folder)
