"""A fake LLM server on 127.0.0.1 speaking Chat Completions, Responses and Anthropic Messages.

Tests point a provider's ``base_url`` at it, so the real SDK clients make real
HTTP requests. Each request takes the next scripted action (a reply or a
fault) and is recorded, so a test can assert what the server received.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes import wire
from fakes.script import Action, Broken, Reply, Status


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

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._actions: deque[Action] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
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

    def _take(self, received: Received) -> Action:
        with self._lock:
            self.requests.append(received)
            if not self._actions:
                return Status(500, "the fake server's script is exhausted")
            return self._actions.popleft()


def _handler_for(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        fake = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer
    protocol_version = "HTTP/1.0"  # one request per connection; streams end when it closes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        headers = {k.lower(): v for k, v in self.headers.items()}
        action = self.fake._take(Received(self.path, headers, body))
        api = wire.api_of(self.path)
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
                self._reply(api, action, model, bool(body.get("stream")))
            case Broken():
                self._broken(api, action, model)

    def _reply(self, api: wire.Api, reply: Reply, model: str, stream: bool) -> None:
        model = reply.model or model
        if stream:
            self._stream(_events(api, reply, model))
            return
        data = {
            "chat": wire.chat_json,
            "responses": wire.responses_json,
            "anthropic": wire.anthropic_json,
        }[api](reply, model)
        self._send(200, "application/json", json.dumps(data).encode())

    def _broken(self, api: wire.Api, broken: Broken, model: str) -> None:
        events = _events(api, broken.reply, broken.reply.model or model)[: broken.after]
        if broken.how == "failed" and api == "responses":
            events.append(wire.responses_failed(broken.reply, model, broken.error_type))
            self._stream(events)
            return
        if broken.how in ("error", "failed"):
            events.append(wire.error_event(api, broken.error_type))
            self._stream(events)
            return
        self._stream(events, close=False)
        if broken.how == "stall":
            time.sleep(broken.seconds)
            return
        # A TCP reset: linger 0 makes close() send RST instead of FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _stream(self, events: list[wire.Event], *, close: bool = True) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for name, data in events:
            lines = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
            self.wfile.write(lines.encode())
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


def _events(api: wire.Api, reply: Reply, model: str) -> list[wire.Event]:
    return {
        "chat": wire.chat_events,
        "responses": wire.responses_events,
        "anthropic": wire.anthropic_events,
    }[api](reply, model)
