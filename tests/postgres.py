"""A throwaway PostgreSQL server for the tests, one per process.

The server is started with the Debian binaries (initdb, pg_ctl) in a temporary
folder on a free port, as the ``postgres`` user when the tests run as root.
The folder is in memory (``/dev/shm``) when there is room: on a disk, initdb's
final sync and removing the folder at the end took seconds each.
Missing binaries fail the tests: PostgreSQL support is tested for real.

This module is imported under one name only (``tests.postgres``), so that
``SERVER`` is one object even when a conftest is imported twice under two
names (as ``store.conftest`` by pytest and ``tests.store.conftest`` by a test
module that imports its fixtures).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_db_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


class _SharedServer:
    """The server of this process: started by its first user, stopped after its last.

    A test module that imports the ``pg_server`` fixture declares one of its own, set
    up apart; it must not start a second server (initdb takes seconds).
    """

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._url = ""
        self._users = 0

    @contextmanager
    def use(self) -> Iterator[str]:
        if not self._users:
            self._url = self._stack.enter_context(_throwaway_server())
        self._users += 1
        try:
            yield self._url
        finally:
            self._users -= 1
            if not self._users:
                self._stack.close()


def _in_memory() -> str | None:
    """``/dev/shm`` when it has a GiB free (a container's may have 64 MiB), else None."""
    try:
        room = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if room.f_bavail * room.f_frsize >= 1 << 30 else None


@contextmanager
def _throwaway_server() -> Iterator[str]:
    bin_dir = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="roost-pg-", dir=_in_memory()))
    data = root / "data"
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    port = _free_port()
    run = dict(check=True, capture_output=True, text=True)
    subprocess.run(
        _as_db_user(
            [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "roost", "--no-sync"]
        ),
        **run,  # type: ignore[call-overload]
    )
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        _as_db_user(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
             str(root / "log"), "start"]
        ),
        **run,  # type: ignore[call-overload]
    )  # fmt: skip
    try:
        yield f"postgresql://roost@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_db_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


SERVER = _SharedServer()


_numbers = itertools.count()


def fresh_database(server: str) -> str:
    """The URL of a new, empty database on the server whose base URL is ``server``."""
    import psycopg

    name = f"t{os.getpid()}_{next(_numbers)}"  # an xdist worker is a process of its own
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        # A file copy of the small template is several times faster than the default,
        # which writes the whole template through the WAL.
        conn.execute(f"CREATE DATABASE {name} STRATEGY FILE_COPY")
    return f"{server}/{name}"
