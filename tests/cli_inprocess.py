"""The roost command line run in the test's own process, as a user's shell would run it.

``run_cli`` takes and answers what ``tests/cli_process.py``'s ``run_cli`` does
(the arguments, the folder, the environment; the exit status, standard output
and standard error) without starting a Python: a child process pays about two
seconds of imports and one of shutdown, the call itself a few milliseconds.

What a fresh process would have and a test's process may not, the call is
given for its duration and everything it changed is put back:

- the folder (``cwd``) and the whole environment (``env`` replaces it, as a
  child's ``env=`` does; ``COLUMNS`` is 80 when unset, the width ``rich`` and
  ``click`` use without a terminal);
- standard input at end of file (``/dev/null``) or holding ``input``, standard
  output and error that are no terminal, and ``sys.argv``;
- log records of warning level or above written to standard error, as
  Python's last-resort handler does in a process that configured no logging;
- tool modules imported from the test's folder are forgotten afterwards, so a
  second command imports the module as it is on disk then;
- no event loop runs in the thread (a test's own, say Playwright's, is set
  aside and put back), so the command's ``asyncio.run`` works as in a process;
- an exception that escapes ``main`` becomes exit status 1 and its traceback
  on standard error, as the interpreter would print it.

The SIGINT handler must be the one the call found: a command that changed it
and left it so fails the test here.

Tests that need a real process stay on ``tests/cli_process.py``: exit by a
signal, Ctrl-C, a terminal, a killed process, what the interpreter prints at
exit, or what importing roost costs.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from roost.cli import main
from roost.tools import loader

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

_LOADED_TOOLS = "_roost_tools_"
# roost's and the tests' own modules that a command imports late stay: their classes must
# stay the same objects for the rest of the session.
_KEPT = frozenset({"roost", "tests"})


@dataclass(frozen=True)
class Ran:
    """What a finished command left: the fields of ``subprocess.CompletedProcess`` it has."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run_cli(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, input: str | None = None
) -> Ran:
    """``roost ARGS...`` in ``cwd``, with no terminal and ``input`` (default: none) to read."""
    out, err = _output(sys.__stdout__), _output(sys.__stderr__)
    with (
        _environment(env),
        contextlib.chdir(cwd),
        _standard_streams(_input(input), out, err),
        _last_resort_logging(err),
        _forgetting_tool_modules(Path(cwd)),
        _sigint_kept(),
        _no_running_loop(),
    ):
        code = _exit_status(args)
    return Ran(args, code, _text(out), _text(err))


def _exit_status(args: tuple[str, ...]) -> int:
    """``main``'s exit status, as the interpreter would turn its end into one."""
    try:
        main(list(args))
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _output(like: IO[str] | None) -> io.TextIOWrapper:
    """A stream encoding as the interpreter's own would in a child (its stderr escapes)."""
    encoding = getattr(like, "encoding", None) or "utf-8"
    errors = getattr(like, "errors", None) or "strict"
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors, write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    """What was written, read as ``subprocess.run(text=True)`` reads it (universal newlines)."""
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return io.TextIOWrapper(io.BytesIO(raw), encoding=stream.encoding).read()


def _input(text: str | None) -> IO[str]:
    """A real file (select() and fileno() work on it) holding ``text``, or /dev/null."""
    if text is None:
        return open(os.devnull, encoding="utf-8")  # closed by _standard_streams
    held = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
    held.write(text)
    held.seek(0)
    return held


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.environ.setdefault("COLUMNS", "80")
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _standard_streams(stdin: IO[str], out: IO[str], err: IO[str]) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr, sys.argv
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    sys.argv = ["roost"]
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
        stdin.close()


@contextlib.contextmanager
def _last_resort_logging(err: IO[str]) -> Iterator[None]:
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


@contextlib.contextmanager
def _forgetting_tool_modules(folder: Path) -> Iterator[None]:
    """Drops the modules the call imported from the flow's folder or for its tools."""
    before_modules = set(sys.modules)
    before_cache = set(loader._CACHE)
    try:
        yield
    finally:
        for key in set(loader._CACHE) - before_cache:
            del loader._CACHE[key]
        for name in set(sys.modules) - before_modules:
            if name.startswith(_LOADED_TOOLS) or _from_folder(name, folder):
                del sys.modules[name]


def _from_folder(name: str, folder: Path) -> bool:
    """A module a tool imported from ``folder`` (roost's own, imported late, stay)."""
    if name.partition(".")[0] in _KEPT:
        return False
    file = getattr(sys.modules[name], "__file__", None)
    return bool(file) and Path(file).resolve().is_relative_to(folder.resolve())


@contextlib.contextmanager
def _sigint_kept() -> Iterator[None]:
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    assert after is before, f"the command left SIGINT handled by {after!r}"


@contextlib.contextmanager
def _no_running_loop() -> Iterator[None]:
    """Sets aside the loop running in this thread (Playwright's sync API keeps one running)."""
    running = asyncio.events._get_running_loop()
    if running is None:
        yield
        return
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.set_event_loop(running)  # asyncio.run leaves the thread without a loop
        asyncio.events._set_running_loop(running)
