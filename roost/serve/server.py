"""Runs the API on uvicorn: checks first (a token beyond loopback, the store), then listens.

The socket is bound here rather than by uvicorn, so that port 0 (any free
port) works and the line printed names the port actually taken.

SIGTERM (or Ctrl-C) drains the server before it stops: it answers 503 to new
runs and messages and to ``/ready`` while the steps in flight end (``--grace``
seconds at most; a second signal cuts that short), then it stops listening and
exits 0. See ``Hub.drain``.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from types import FrameType
from typing import TYPE_CHECKING

import uvicorn

from roost.batch.drain import GRACE_SECONDS
from roost.errors import RoostError, UsageError
from roost.serve.config import ServeConfig, check_exposure, check_flows_folder

if TYPE_CHECKING:
    from roost.serve.hub import Hub


class DrainingServer(uvicorn.Server):
    """uvicorn's server, drained on the first SIGTERM or SIGINT and stopped on the second."""

    def __init__(self, config: uvicorn.Config, hub: Hub, grace: float) -> None:
        super().__init__(config)
        self.hub = hub
        self.grace = grace
        self._loop: asyncio.AbstractEventLoop | None = None
        self._hurry: asyncio.Event | None = None
        self._drain: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._hurry = asyncio.Event()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not uvicorn's: that would stop listening at once, and raise the signal again once
        # stopped (a SIGTERM then kills the process instead of letting it exit 0).
        loop = self._loop
        if loop is None or not self.started:
            self.should_exit = True
            return
        loop.call_soon_threadsafe(self._on_signal)

    def _on_signal(self) -> None:
        if self._drain is None:
            self._drain = asyncio.ensure_future(self._drained())
        elif self._hurry is not None:
            self._hurry.set()  # a second signal: what is still running is cancelled now

    async def _drained(self) -> None:
        try:
            await self.hub.drain(self.grace, self._hurry)
        finally:
            self.should_exit = True


def serve(host: str, port: int, config: ServeConfig, grace: float = GRACE_SECONDS) -> int:
    """Serves until stopped (Ctrl-C, SIGTERM: drained first); the exit status."""
    from roost.serve.app import create_app
    from roost.serve.hub import Hub

    check_exposure(host, config.tokens)
    check_flows_folder(config.flows)
    hub = Hub(config)  # the store opens now: a bad --db is one line, before listening
    try:
        sock = _bind(host, port)
    except RoostError:
        hub.store.close()
        raise
    app = create_app(config, hub)
    settings = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        server_header=False,
        ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )
    server = DrainingServer(settings, hub, grace)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if sock.family == socket.AF_INET6 else bound[0]
    access = "token required" if config.tokens else "no token: loopback only"
    print(
        f"roost serve: listening on http://{shown}:{bound[1]} ({access}); "
        f"flows from {config.flows}, runs in {hub.store.shown_url}",
        flush=True,
    )
    server.run(sockets=[sock])
    return 0 if server.started else 1


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(f"--host {host}: not an address this machine can listen on") from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot listen on {host}:{port}: {reason}") from exc
    # Listening now, before the line naming the port is printed: a client that reads the
    # line and connects at once waits in the backlog until uvicorn accepts, never refused.
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


if __name__ == "__main__":  # pragma: no cover - run as ``roost serve``
    sys.exit("use: roost serve")
