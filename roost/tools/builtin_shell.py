"""``builtin#shell``: one command run by ``/bin/sh`` in the flow's folder, bounded.

The command gets no input, a small environment (``PATH``, ``HOME``, ``USER``,
``LANG``, ``LC_ALL``, ``TMPDIR`` when set, and the flow's
``builtins.shell.env``; no other variable of roost's environment, so no key
the flow does not hand it), and a keeper process (``_KEEPER``) of its own.
Its output (stdout and stderr together) is read as it comes: the first
``max_output`` bytes are kept, the rest counted and dropped. When the command
ends, has not finished within ``timeout`` seconds, or the call is cancelled,
the keeper kills every process the command started, those that left its
session or group included (Linux), so nothing it started outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

from roost.tools.refused import Refused

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import BuiltinShell

PASSED_ON = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR")
_CHUNK = 1 << 16
REAP_WAIT = 2.0  # seconds a killed command is waited for

# The command's keeper: a small Python process (no site, no roost) that runs the command
# and, when it ends or is stopped, kills every process the command started. On Linux it
# is a "child subreaper": a process of the command's that leaves its session or group
# (setsid, a double fork) is handed to the keeper when its parent dies, instead of to
# init, so none can slip out of the tree it kills. It dies with roost (PDEATHSIG).
_KEEPER = r"""
import ctypes, os, signal, sys, time

class Stop(Exception):
    pass

def stop(*_):
    raise Stop

def tree(me):
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != b"Z":
                parents[int(name)] = int(fields[1])
    found, grew = set(), True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if pid not in found and (parent == me or parent in found):
                found.add(pid)
                grew = True
    return found

def kill_all(me, child):
    for _ in range(500):
        if child is not None:
            try:
                os.killpg(child, signal.SIGKILL)
            except OSError:
                pass
        left = tree(me) if sys.platform == "linux" else set()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        if not left:
            return
        time.sleep(0.005)

signal.signal(signal.SIGTERM, stop)
if sys.platform == "linux":
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit(137)  # roost is gone already
child, code = None, 137
try:
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.execv("/bin/sh", ["/bin/sh", "-c", sys.argv[2]])
    status = os.waitpid(child, 0)[1]
    code = os.waitstatus_to_exitcode(status)
    code = 128 - code if code < 0 else code
except Stop:
    pass
finally:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_all(os.getpid(), child)
os._exit(code)
"""


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
        _stop(process)
    if timed_out:
        await _reaped(process)
        return f"{output.text()}[killed: the command ran longer than {settings.timeout:g} s]", True
    return f"{output.text()}[exit status {process.returncode}]", process.returncode != 0


async def _start(command: str, folder: Path, settings: BuiltinShell) -> asyncio.subprocess.Process:
    """The running command; cancelled while it starts, it is killed once it has started."""
    keeper = (sys.executable, "-I", "-S", "-c", _KEEPER, str(os.getpid()), command)
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *keeper,
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
        _stop(spawn.result())


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


def _stop(process: asyncio.subprocess.Process) -> None:
    """Stops the command's keeper, which kills every process the command started.

    Only while it runs: the id of a keeper that ended and was reaped may be another
    process's by now.
    """
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGTERM)
