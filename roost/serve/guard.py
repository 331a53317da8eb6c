"""What every request passes before the API sees it: its token, and the size of its body.

A plain ASGI middleware, so that it covers every route, the WebSocket and
paths that match none. A body whose declared length is over the limit is
refused before it is read; one sent without a length is cut off once it
passes the limit. Both answer 413 with one JSON line.

With tokens set, a request needs ``Authorization: Bearer TOKEN``; a browser's
WebSocket, which cannot set that header, may send the token as the
subprotocol ``bearer.TOKEN`` (beside ``roost``). The page, ``/health``, ``/ready``
(what a load balancer asks, which cannot send a token) and the API's own
documentation hold no data and are open to all; ``/metrics`` needs the token. Tokens are compared
as SHA-256 digests, in constant time: the server never keeps one in clear.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from roost.serve.apidocs import DOCS_PATHS
from roost.serve.config import token_digest

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/", "/health", "/ready", "/openapi.json", *DOCS_PATHS})
SUBPROTOCOL = "bearer."


def token_of(scope: Scope) -> str | None:
    """The bearer token a request carries, in its header or (a WebSocket) its subprotocol."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
        if name == b"sec-websocket-protocol":
            for offered in value.decode("latin-1").split(","):
                offered = offered.strip()
                if offered.startswith(SUBPROTOCOL):
                    return str(offered[len(SUBPROTOCOL) :])
    return None


def known(token: str | None, digests: frozenset[str]) -> bool:
    if token is None:
        return False
    digest = token_digest(token)
    found = False
    for candidate in digests:  # every digest compared, so timing tells nothing
        found |= hmac.compare_digest(digest, candidate)
    return found


class Guard:
    """Refuses requests without a known token (when the server has tokens) and bodies too large."""

    def __init__(self, app: App, *, tokens: frozenset[str], body_limit: int) -> None:
        self.app = app
        self.tokens = tokens
        self.body_limit = body_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        guarded = self.tokens and scope["path"] not in OPEN_PATHS
        if guarded and not known(token_of(scope), self.tokens):
            await refuse(scope, send, 401, "unauthorized", _UNAUTHORIZED)
            return
        if kind == "http":
            declared = _content_length(scope)
            if declared is not None and declared > self.body_limit:
                await refuse(scope, send, 413, "too_large", self.too_large)
                return
            receive = self._counted(receive)
        await self.app(scope, receive, send)

    @property
    def too_large(self) -> str:
        return f"the request body is over the server's limit of {self.body_limit} bytes"

    def _counted(self, receive: Receive) -> Receive:
        """``receive`` that stops a body sent without a length once it passes the limit."""
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.body_limit:
                    # The framework passes an HTTPException on to the app's handler.
                    raise HTTPException(413, self.too_large)
            return message

        return counted


_UNAUTHORIZED = "this server needs a token: send the header Authorization: Bearer TOKEN"


def header(scope: Scope, wanted: bytes) -> str | None:
    """The first value of the request's header ``wanted`` (lowercase), or None."""
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


def _content_length(scope: Scope) -> int | None:
    value = header(scope, b"content-length")
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


async def refuse(scope: Scope, send: Send, status: int, kind: str, text: str) -> None:
    """Answers a request with one JSON error line (a WebSocket: refuses its handshake)."""
    if scope["type"] == "websocket":
        # Closing before accepting answers the handshake with HTTP 403.
        await send({"type": "websocket.close", "code": 1008, "reason": text[:120]})
        return
    body = json.dumps({"error": text, "kind": kind}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
