"""A fake LLM server on 127.0.0.1 speaking Chat Completions, Responses and Anthropic Messages.

Tests point a provider's ``base_url`` at it, so the real SDK clients make real
HTTP requests. Each request takes the next scripted action (a reply or a
fault) and is recorded, so a test can assert what the server received. A
request body the real API would refuse (not JSON, no model, no messages)
gets a 400 in the API's error format and takes no action.

By default every answer closes its connection (HTTP/1.0), so a stream ends
when the connection does. ``keep_alive=True`` speaks HTTP/1.1 as the real
services do: connections stay open between requests, JSON bodies carry a
length and streams are sent with chunked transfer encoding, so a connection
closed before the last chunk is a broken body the client can tell apart.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from fakes import wire
from fakes.script import Action, Broken, Framing, Reply, Status, too_long

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def api_key(self) -> str:
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") or self.headers.get("x-api-key", "")


class FakeLLMServer:
    """Start with ``start()`` (or as a context manager); script with ``script(...)``."""

    def __init__(
        self,
        *,
        keep_alive: bool = False,
        window: int | None = None,
        responder: Callable[[Received], Action] | None = None,
    ) -> None:
        """``window``: like a real model, a request longer than this many tokens
        (``wire.prompt_tokens``) is refused with the API's own error, and every reply
        reports the request's size as its prompt tokens. ``responder`` answers a
        request when nothing is scripted."""
        self.requests: list[Received] = []
        self.keep_alive = keep_alive
        self.window = window
        self.responder = responder
        self.refused = 0  # requests refused as longer than the window
        self.connections = 0  # TCP connections accepted: a reused one is not counted again
        self._actions: deque[Action] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self, keep_alive))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *actions: Action) -> None:
        """Queue what the next requests get, in order."""
        with self._lock:
            self._actions.extend(actions)

    @property
    def remaining(self) -> int:
        return len(self._actions)

    def _record(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)

    def _take(self, received: Received) -> Action:
        api = wire.api_of(received.path)
        tokens = wire.prompt_tokens(received.body) if self.window and api else 0
        with self._lock:
            self.requests.append(received)
            if self.window and api and tokens > self.window:
                self.refused += 1
                return too_long(api, tokens, self.window)
            if self._actions:
                action = self._actions.popleft()
            elif self.responder is not None:
                action = self.responder(received)
            else:
                return Status(500, "the fake server's script is exhausted")
        if self.window and isinstance(action, Reply):  # the usage a real model reports
            action = replace(action, usage=replace(action.usage, prompt=tokens))
        return action

    def _connected(self) -> None:
        with self._lock:
            self.connections += 1


def _handler_for(server: FakeLLMServer, keep_alive: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = server
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

    return Handler


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # Each write leaves at once: a stream split into pieces reaches the client in pieces.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.fake._connected()

    @property
    def _chunked(self) -> bool:
        return self.protocol_version == "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        api = wire.api_of(self.path)
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
            problem: str | None = "could not parse the JSON body of the request"
        else:
            problem = wire.request_problem(api, body) if api else None
        if problem is not None and api is not None:
            self.fake._record(Received(self.path, headers, body if isinstance(body, dict) else {}))
            refusal = Status(400, problem, "invalid_request_error", headers={})
            self._send(400, "application/json", wire.status_body(api, refusal).encode())
            return
        action = self.fake._take(Received(self.path, headers, body or {}))
        if api is None:
            self._send(404, "text/plain", b"no such endpoint")
            return
        model = str(body.get("model", "fake-model"))
        match action:
            case Status():
                headers_out = dict(action.headers)
                text = wire.status_body(api, action).encode()
                self._send(action.status, action.content_type, text, headers_out)
            case Reply():
                reply = wire.honour_format(api, body, action)
                self._reply(api, reply, model, bool(body.get("stream")))
            case Broken():
                self._broken(api, action, model)

    def _reply(self, api: wire.Api, reply: Reply, model: str, stream: bool) -> None:
        model = reply.model or model
        if stream:
            self._stream(_events(api, reply, model), reply.framing)
            return
        data = {
            "chat": wire.chat_json,
            "responses": wire.responses_json,
            "anthropic": wire.anthropic_json,
        }[api](reply, model)
        self._send(200, "application/json", json.dumps(data).encode())

    def _broken(self, api: wire.Api, broken: Broken, model: str) -> None:
        reply = broken.reply
        events = _events(api, reply, reply.model or model)[: broken.after]
        if broken.how == "failed" and api == "responses":
            events.append(wire.responses_failed(reply, model, broken.error_type))
            self._stream(events, reply.framing)
            return
        if broken.how in ("error", "failed"):
            events.append(wire.error_event(api, broken.error_type))
            self._stream(events, reply.framing)
            return
        self._stream(events, reply.framing, end=False)
        self.close_connection = True
        if broken.how == "stall":
            time.sleep(broken.seconds)
            return
        if broken.how == "reset":
            # A TCP reset: linger 0 makes close() send RST instead of FIN.
            linger = struct.pack("ii", 1, 0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        else:  # a clean close: FIN, without the last chunk of a chunked body
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_WR)
        self.connection.close()

    def _stream(self, events: list[wire.Event], framing: Framing, *, end: bool = True) -> None:
        """Send ``events`` as server-sent events; ``end=False`` leaves the body unfinished."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        if self._chunked:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for data in sse_bytes(events, framing):
            self._write(data, framing.split)
        if end and self._chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _write(self, data: bytes, split: int) -> None:
        """One event, whole or in pieces of ``split`` bytes, each its own chunk and write."""
        step = split or len(data)
        for start in range(0, len(data), step):
            piece = data[start : start + step]
            if self._chunked:
                piece = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            self.wfile.write(piece)
            self.wfile.flush()

    def _send(
        self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


def sse_bytes(events: list[wire.Event], framing: Framing) -> list[bytes]:
    """Each event as the bytes of a server-sent event, with ``framing``'s habits."""
    newline = "\r\n" if framing.crlf else "\n"
    ping = f": keep-alive{newline}{newline}" if framing.comments else ""
    out: list[bytes] = []
    for name, data in events:
        lines = [f"event: {name}"] if name else []
        if framing.comments:
            lines.append(": a comment line inside an event is ignored too")
        lines.append(f"data: {data}")
        text = ping + newline.join(lines)
        out.append((text + newline + newline).encode())
    return out


def _events(api: wire.Api, reply: Reply, model: str) -> list[wire.Event]:
    return {
        "chat": wire.chat_events,
        "responses": wire.responses_events,
        "anthropic": wire.anthropic_events,
    }[api](reply, model)
