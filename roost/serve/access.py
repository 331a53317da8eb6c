"""Who may reach a server that has no token: this machine's own pages, by its own names.

A server without a token listens on loopback only, but a browser on this
machine visits pages from anywhere, and any of them can send requests to
``http://127.0.0.1:PORT``. Two rules keep those pages out:

- **Host**: the request must name the server by a loopback name (``localhost``,
  ``127.0.0.1``, ``[::1]``, or the ``--host`` it listens on). A page of
  ``attacker.example`` whose name the attacker re-points at 127.0.0.1 (DNS
  rebinding) sends ``Host: attacker.example`` and is refused.
- **Origin**: every WebSocket and every request that changes something (any
  method but GET, HEAD and OPTIONS, with or without a body) that carries an
  ``Origin`` must come from the server's own origin (the one its ``Host``
  names) or one allowed with ``--cors``. Browsers send ``Origin`` on all of
  these, and a page cannot forge it; a client that is not a browser (curl, a
  script) sends none and is let through: it runs on this machine already.

Both answer ``403`` with one JSON line (a WebSocket: its handshake is refused).
With tokens the token is the guard (a page elsewhere does not hold it), and a
server behind a proxy may be reached by any name, so neither rule applies.
``roost serve`` installs it; anything else that serves roost on loopback
without a token installs the same middleware.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from roost.serve.guard import App, Receive, Scope, Send, header, refuse

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


@dataclass(frozen=True)
class Access:
    """The names a token-less server answers to and the other origins it lets in."""

    names: frozenset[str]
    origins: frozenset[str] = frozenset()

    @classmethod
    def loopback(cls, host: str, origins: Iterable[str] = ()) -> Access:
        """The rules of a server listening on ``host``, with ``origins`` allowed by ``--cors``."""
        names = {"localhost", "127.0.0.1", "::1", host.strip("[]").lower()}
        return cls(frozenset(names), frozenset(origin.rstrip("/") for origin in origins))

    def host_allowed(self, host: str) -> bool:
        """Whether a ``Host`` header names this server (any port: the socket took the port)."""
        name, _ = split_host(host)
        if name in self.names:
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        """Whether a page of ``origin`` may act on the server its request names as ``host``."""
        if origin.rstrip("/") in self.origins:
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or host is None:
            return False  # "null" (a sandboxed frame, a file), or not an origin at all
        try:
            port = parts.port or _DEFAULT_PORTS[parts.scheme]
        except ValueError:
            return False
        name, given = split_host(host)
        return (parts.hostname.lower(), port) == (name, given or _DEFAULT_PORTS[parts.scheme])

    def refusal(self, scope: Scope) -> str | None:
        """Why a request may not go on (one line), or None when it may."""
        host = header(scope, b"host")
        if host is not None and not self.host_allowed(host):
            return (
                f"this server answers only to localhost and 127.0.0.1, not to the name {host!r}: "
                "without a token it takes requests from this machine's own pages only"
            )
        changes = scope["type"] == "websocket" or scope.get("method", "GET") not in SAFE_METHODS
        origin = header(scope, b"origin")
        if changes and origin is not None and not self.origin_allowed(origin, host):
            return (
                f"a page of {origin} may not act on this server: without a token it takes "
                "requests from its own page only (allow another origin with --cors)"
            )
        return None


def split_host(host: str) -> tuple[str, int | None]:
    """A ``Host`` header's name (lowercase, an IPv6 address without brackets) and port."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        name, _, port = host.partition(":") if host.count(":") == 1 else (host, "", "")
    return name.rstrip("."), int(port) if port.isdigit() else None


class SameOrigin:
    """Refuses requests of other sites' pages to a server without a token (the rules above)."""

    def __init__(self, app: App, *, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            reason = self.access.refusal(scope)
            if reason is not None:
                await refuse(scope, send, 403, "forbidden", reason)
                return
        await self.app(scope, receive, send)
