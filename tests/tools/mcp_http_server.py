"""An MCP server over HTTP on 127.0.0.1 (streamable HTTP or SSE), run by uvicorn in a thread."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

if TYPE_CHECKING:
    from collections.abc import Iterator

server = MCPServer("weather")


@server.tool()
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"Sunny in {city}"


@server.tool()
def temperature(city: str) -> dict[str, object]:
    """The temperature in a city, as structured data."""
    return {"city": city, "celsius": 21}


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one header of the HTTP request that carried this call ("" if absent)."""
    request = ctx.request_context.request
    return "" if request is None else str(request.headers.get(name, ""))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_http_server(
    transport: Literal["streamable-http", "sse"] = "streamable-http",
) -> Iterator[str]:
    """Serves the MCP app on a free loopback port; yields its URL (the SSE endpoint for sse)."""
    port = _free_port()
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not web.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test MCP HTTP server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        web.should_exit = True
        thread.join(10)
