"""``builtin#shell``: one command run by ``/bin/sh`` in the flow's folder, bounded.

The command gets no input, a small environment (``PATH``, ``HOME``, ``USER``,
``LANG``, ``LC_ALL``, ``TMPDIR`` when set, and the flow's
``builtins.shell.env``; no other variable of roost's environment, so no key
the flow does not hand it), and its own process group. Its output (stdout and
stderr together) is read as it comes: the first ``max_output`` bytes are
kept, the rest counted and dropped. When the command has not finished within
``timeout`` seconds, or the call is cancelled, the whole group is killed, so
nothing it started outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import TYPE_CHECKING

from roost.tools.refused import Refused

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import BuiltinShell

PASSED_ON = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR")
_CHUNK = 1 << 16
REAP_WAIT = 2.0  # seconds a killed command is waited for


async def run_command(command: str, folder: Path, settings: BuiltinShell) -> tuple[str, bool]:
    """The output and exit status of ``command`` as text for the model, and whether it failed."""
    process = await _start(command, folder, settings)
    output = _Output(settings.max_output)
    timed_out = False
    try:
        async with asyncio.timeout(settings.timeout):
            await output.read(process)
            await process.wait()
    except TimeoutError:
        timed_out = True
    finally:
        _kill_group(process.pid)
    if timed_out:
        await _reaped(process)
        return f"{output.text()}[killed: the command ran longer than {settings.timeout:g} s]", True
    return f"{output.text()}[exit status {process.returncode}]", process.returncode != 0


async def _start(command: str, folder: Path, settings: BuiltinShell) -> asyncio.subprocess.Process:
    """The running command; cancelled while it starts, it is killed once it has started."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=folder,
            env=_environment(settings),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except OSError as exc:
        raise Refused(f"the command could not start: {exc.strerror or exc}") from None
    except asyncio.CancelledError:
        spawn.add_done_callback(_kill_started)
        raise


def _kill_started(spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not spawn.cancelled() and spawn.exception() is None:
        _kill_group(spawn.result().pid)


class _Output:
    """What a command wrote: the first ``limit`` bytes kept, all of them counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.total = 0

    async def read(self, process: asyncio.subprocess.Process) -> None:
        """Reads the output to its end (or until the call stops waiting)."""
        assert process.stdout is not None
        while chunk := await process.stdout.read(_CHUNK):
            self.total += len(chunk)
            if len(self.kept) < self.limit:
                self.kept.extend(chunk[: self.limit - len(self.kept)])

    def text(self) -> str:
        """The kept output, ending in a newline, with a note when some was dropped."""
        return _shown(bytes(self.kept), self.total, self.limit)


def _shown(output: bytes, total: int, limit: int) -> str:
    text = output.decode("utf-8", errors="replace")
    if text and not text.endswith("\n"):
        text += "\n"
    if total > limit:
        text += f"[output cut: the first {limit} of {total} bytes are shown]\n"
    return text


def _environment(settings: BuiltinShell) -> dict[str, str]:
    passed = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    passed.setdefault("PATH", os.defpath)
    return {**passed, **settings.env}


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Waits a moment for the killed command to be gone.

    Not for ever: a process that left the group still holds the output pipe,
    and asyncio waits for the pipe to close as well.
    """
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(REAP_WAIT):
            await process.wait()


def _kill_group(pid: int) -> None:
    """Kills what is left of the command's process group (it may have ended already)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
