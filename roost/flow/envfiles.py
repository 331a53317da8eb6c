"""The ``.env`` files a flow's ``${NAME}`` placeholders read besides the environment.

Two files are read, if they exist: ``.env`` in the current folder and ``.env``
beside the flow file. The environment wins over both, and the flow's own file
wins over the current folder's: the nearer a value is set to the run (a shell's
``NAME=... roost run``, then the flow's folder), the more it says about this
run. python-dotenv reads them, its syntax and ``${VAR}`` interpolation
included. A line it cannot parse is a located problem; the line itself is never
quoted, as it may hold a secret. Values read here are substituted like any
other variable, so they are secrets unless the flow lists them in ``public_env``.
"""

from __future__ import annotations

import io
import os

from roost.errors import Problem

ENV_FILE = ".env"
_MAX_BYTES = 1 << 20  # no hand-written .env is this long; reading on would only fill memory


def env_files(flow_file: str) -> list[str]:
    """The ``.env`` files the flow at ``flow_file`` reads, the weaker first (no repeats).

    Named as messages show them: ``.env`` and the flow's folder as it was given.
    """
    found: list[str] = []
    for candidate in (ENV_FILE, os.path.join(os.path.dirname(flow_file), ENV_FILE)):
        if os.path.isfile(candidate) and not any(_same(candidate, seen) for seen in found):
            found.append(candidate)
    return found


def env_file_values(flow_file: str) -> tuple[dict[str, str], list[Problem]]:
    """What the .env files of ``flow_file`` set (the flow's over the current folder's),
    and their problems. The environment goes over these."""
    merged: dict[str, str] = {}
    problems: list[Problem] = []
    for path in env_files(flow_file):
        values, found = read_env_file(path)
        merged.update(values)
        problems += found
    return merged, problems


def read_env_file(file: str) -> tuple[dict[str, str], list[Problem]]:
    """The variables one ``.env`` file sets, or the problems that keep it from being read."""
    try:
        with open(file, "rb") as stream:
            raw = stream.read(_MAX_BYTES + 1)
    except OSError as exc:
        return {}, [Problem(file, 1, 1, f"cannot read the file: {exc.strerror or exc}")]
    if len(raw) > _MAX_BYTES:
        return {}, [Problem(file, 1, 1, f"the file is over {_MAX_BYTES >> 20} MiB")]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return {}, [Problem(file, line, 1, "the file is not UTF-8 text")]
    # python-dotenv only where a .env file is there to read (most flows have none).
    from dotenv.main import resolve_variables
    from dotenv.parser import parse_stream

    bindings = list(parse_stream(io.StringIO(text)))
    problems = [
        Problem(
            file,
            binding.original.line,
            1,
            "this line is not NAME=value (a quote left open, or text that is neither "
            "a variable nor a # comment)",
        )
        for binding in bindings
        if binding.error
    ]
    if problems:
        return {}, problems
    pairs = [(b.key, b.value) for b in bindings if b.key is not None]
    # The environment wins inside the file too: ${VAR} in a value reads it first.
    resolved = resolve_variables(pairs, override=False)
    return {name: value for name, value in resolved.items() if value is not None}, []


def _same(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False
