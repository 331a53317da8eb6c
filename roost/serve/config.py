"""What a ``roost serve`` process is started with, and the checks made before it listens."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import secrets
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import UsageError

if TYPE_CHECKING:
    from roost.serve.servefile import Schedule

BODY_LIMIT = 1 * 2**20  # bytes in one request body: far more than any message or flow path
QUEUE_LIMIT = 32  # messages that may wait for one run
STREAMS_PER_CLIENT = 32  # streams (SSE and WebSocket) one client address may hold open
LEASE_SECONDS = 30.0
TOKEN_MIN_LENGTH = 16
_HASHED = "sha256:"


@dataclass(frozen=True)
class ServeConfig:
    """One server's settings; ``tokens`` holds SHA-256 digests (hex), never a token itself."""

    flows: Path = Path(".")
    db: str | None = None
    host: str = "127.0.0.1"  # the address listened on: without a token, the name pages use
    tokens: frozenset[str] = frozenset()
    cors: tuple[str, ...] = ()
    queue_limit: int = QUEUE_LIMIT
    streams_per_client: int = STREAMS_PER_CLIENT
    body_limit: int = BODY_LIMIT
    lease_seconds: float = LEASE_SECONDS
    worker: str = field(default_factory=lambda: worker_name())
    cached_runs: int = 10_000  # idle runs whose state is kept in memory between steps
    schedules: tuple[Schedule, ...] = ()  # from the --config file
    schedule_clock: Callable[[], float] | None = None  # seconds since the epoch; None: real
    studio: bool = False  # roost studio: flow files may be read and edited over the API

    @property
    def poll_seconds(self) -> float:
        """How often a worker looks for runs whose lease expired (and streams for news)."""
        return max(0.1, min(1.0, self.lease_seconds / 3))


def worker_name() -> str:
    """This process's name in the leases it holds: host, process id and a random part."""
    return f"{socket.gethostname()[:80]}-{os.getpid()}-{secrets.token_hex(3)}"


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_digests(given: Iterable[str], environ: str | None) -> frozenset[str]:
    """The digests of the tokens given with ``--token`` and in ``ROOST_TOKENS``.

    A token is written as itself, or as ``sha256:HEX`` (its digest), so that a
    token kept in a file or a service's settings need never be kept in clear.
    ``ROOST_TOKENS`` separates tokens with commas or spaces.
    """
    entries = [*given, *(environ or "").replace(",", " ").split()]
    digests: set[str] = set()
    for entry in entries:
        entry = entry.strip()
        if entry.startswith(_HASHED):
            digest = entry[len(_HASHED) :].lower()
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise UsageError("a token given as sha256:HEX needs 64 hexadecimal digits")
            digests.add(digest)
            continue
        if len(entry) < TOKEN_MIN_LENGTH:
            raise UsageError(
                f"a token must have at least {TOKEN_MIN_LENGTH} characters "
                "(python -c 'import secrets; print(secrets.token_urlsafe())' makes one)"
            )
        digests.add(token_digest(entry))
    return frozenset(digests)


def is_loopback(host: str) -> bool:
    """Whether ``host`` can be reached only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def check_exposure(host: str, tokens: frozenset[str]) -> None:
    """Refuses to listen beyond this machine when no token guards the API."""
    if not tokens and not is_loopback(host):
        raise UsageError(
            f"--host {host} can be reached from other machines: give a token with "
            "--token or ROOST_TOKENS, so that only those who hold one get in"
        )


def check_flows_folder(folder: Path) -> Path:
    if not folder.is_dir():
        raise UsageError(f"--flows {folder}: no such folder")
    return folder
