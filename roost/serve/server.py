"""Runs the API on uvicorn: checks first (a token beyond loopback, the store), then listens.

The socket is bound here rather than by uvicorn, so that port 0 (any free
port) works and the line printed names the port actually taken.
"""

from __future__ import annotations

import socket
import sys

from roost.errors import RoostError, UsageError
from roost.serve.config import ServeConfig, check_exposure, check_flows_folder


def serve(host: str, port: int, config: ServeConfig) -> int:
    """Serves until stopped (Ctrl-C, SIGTERM); the exit status."""
    import uvicorn

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
    server = uvicorn.Server(settings)
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
