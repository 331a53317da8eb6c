"""MCP servers (``mcp_servers:``) and their tools (``mcp: SERVER``), through the official SDK.

A server is reached over stdio (roost starts its command), streamable HTTP or
the older HTTP+SSE transport (``transport: sse``), each the SDK's own client.

Every connection of one toolbox lives on a private event loop in a daemon
thread that ``McpHub`` owns. That keeps the SDK's task groups entered and left
in one task, lets a listing happen from the synchronous toolbox call, and
survives the engine running its steps in several ``asyncio.run`` calls. A
server starts on first use, its tools are listed once, and ``close()`` (or
``aclose()``) stops every server process; a hub never closed is closed when
the interpreter exits.

The SDK starts a stdio server in a process group of its own and, when its
transport shuts down, closes the server's stdin, then signals the whole group
(SIGTERM, then SIGKILL). roost makes sure that shutdown always runs to its end
before it goes on: a start that fails or takes longer than the server's
``timeout`` is cancelled inside the hub's loop (never by a bare task cancel,
which would cut the shutdown short), and ``close()`` waits for servers still
starting as well. A server that never answers and ignores both EOF and SIGTERM
is therefore gone, with its children, when roost exits.

A server's stderr goes to a pipe that the hub's loop drains as it is written,
keeping only the last 64 KiB: a server writing gigabytes costs roost no more
memory or disk, and a failure quotes at most a few hundred characters of it.

The SDK logs what it meets (a server's banner on stdout, a line that is not
JSON-RPC) with tracebacks that quote the server's output, which may hold a
value from the flow's environment. Those records are not made at all here (the
"mcp" loggers sit above every level), so they reach neither roost's stderr nor
a log an application set up; roost says what went wrong in its own one line (a
server that fails to start), with the flow's secrets masked.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import math
import os
import sys
import threading
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import mcp
import mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from roost.errors import ToolFailure
from roost.flow.models import HttpServer, McpServerConfig, McpTool, StdioServer
from roost.messages import ToolSpec
from roost.tools.arguments import (
    InvalidSchema,
    UncheckableSchema,
    argument_problem,
    schema_validator,
)
from roost.tools.base import ToolOutcome
from roost.tools.python_tool import result_text
from roost.tools.stderr_tail import StderrTail

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

# The SDK's loggers: its modules log under "mcp", its client session as "client".
_SDK_FOLDER = os.path.dirname(mcp.__file__) + os.sep


class _DropSdkRecords(logging.Filter):
    """Drops the records the SDK logs on a name it shares with others ("client")."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.pathname.startswith(_SDK_FOLDER)


def _quiet_sdk() -> None:
    """Keeps the SDK's log records (and their tracebacks) off every handler."""
    # Above every level: no record of the SDK's modules is even made (an application
    # that wants them back can lower it); "client" is a shared name, so a filter there.
    logging.getLogger("mcp").setLevel(logging.CRITICAL + 1)
    logging.getLogger("client").addFilter(_DropSdkRecords())


_quiet_sdk()

# Hubs with live servers, so that the ones nobody closed are closed at exit.
_LIVE: set[McpHub] = set()
# Seconds an SSE stream may stay silent before the server is taken as gone (the SDK's
# servers send a keep-alive every 15 s; a run may sit idle between calls for minutes).
SSE_SILENCE = 300.0
# Longer than the SDK's whole shutdown (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL, 2 s).
_CLOSE_WAIT = 10.0


@dataclass
class _Server:
    """One server's connection, from the moment it is asked to start until it has stopped."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    startup: anyio.CancelScope | None = None  # cancelled to give up a start in progress
    task: asyncio.Task[None] | None = None
    session: ClientSession | None = None
    tools: list[mcp_types.Tool] = field(default_factory=list)

    def halt(self) -> None:
        """Asks the server to stop, whether it is running or still starting (in the loop)."""
        self.stop.set()
        if self.startup is not None:
            self.startup.cancel()


class McpHub:
    """The open connections to a flow's MCP servers, keyed by server name."""

    def __init__(self, servers: dict[str, McpServerConfig], folder: Path) -> None:
        self._servers = servers
        self._folder = folder.resolve()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[str, _Server] = {}
        self._lock = threading.Lock()

    def list_tools(self, server: str) -> list[mcp_types.Tool]:
        """The server's tools, starting it on first use; raises ToolFailure naming it."""
        with self._lock:
            if server not in self._connections:
                self._connect(server)
            return self._connections[server].tools

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Calls one tool; a failure of the tool or of the connection is an error outcome."""
        connection = self._connections.get(server)
        if connection is None or connection.session is None or self._loop is None:
            return ToolOutcome(f"MCP server {server!r} is not connected", is_error=True)
        future = asyncio.run_coroutine_threadsafe(
            _call(connection.session, tool, arguments), self._loop
        )
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def close(self) -> None:
        """Stops every server (started or starting) and the hub's thread; safe to call twice."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        servers = list(self._connections.values())
        for server in servers:
            loop.call_soon_threadsafe(server.halt)
        for server in servers:
            _wait_done(server, loop)
        self._connections.clear()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CLOSE_WAIT)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None
        _LIVE.discard(self)

    async def aclose(self) -> None:
        """``close()`` without blocking the caller's event loop."""
        await asyncio.to_thread(self.close)

    def _connect(self, name: str) -> None:
        """Starts server ``name`` and waits until it is ready, or has failed and stopped."""
        config = self._servers.get(name)
        if config is None:
            raise ToolFailure(f"MCP server {name!r} is not declared under mcp_servers")
        loop = self._ensure_loop()
        server = _Server()
        # Registered before it starts, so that close() (at exit, say) stops it even then.
        self._connections[name] = server
        ready = asyncio.run_coroutine_threadsafe(_open(server, name, config, self._folder), loop)
        try:
            # The deadline is kept inside the loop, where a late server is stopped in an
            # orderly way; this wait only outlasts it by the time that stop may take.
            ready.result(config.timeout + _CLOSE_WAIT)
        except BaseException as exc:
            del self._connections[name]
            loop.call_soon_threadsafe(server.halt)
            _wait_done(server, loop)
            if isinstance(exc, concurrent.futures.TimeoutError):
                raise ToolFailure(_late(name, config)) from None
            raise

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="roost-mcp", daemon=True
            )
            self._thread.start()
            _LIVE.add(self)
        return self._loop


class McpServerTool:
    """One tool of an MCP server as a ``Tool``, named ``SERVER#tool`` in the flow."""

    def __init__(
        self, wire: str, remote: mcp_types.Tool, server: str, hub: McpHub, config: McpTool
    ) -> None:
        self.spec = ToolSpec(
            name=wire,
            description=remote.description or remote.title or "",
            parameters=dict(remote.input_schema) or {"type": "object", "properties": {}},
        )
        self.direct_output = config.direct_output
        self.approval = config.approval == "always"
        self.timeout = config.timeout
        self._remote = remote.name
        self._server = server
        self._hub = hub
        self._validator = _validator_or_none(self.spec.parameters)

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        """Checks the arguments against the server's input schema, then runs the tool there."""
        if problem := self._argument_problem(arguments):
            return ToolOutcome(f"invalid arguments for {self.spec.name}: {problem}", is_error=True)
        return await self._hub.call(self._server, self._remote, arguments)

    def _argument_problem(self, arguments: dict[str, Any]) -> str | None:
        if self._validator is None:
            return None
        try:
            return argument_problem(self._validator, arguments)
        except UncheckableSchema:
            return None  # a $ref roost cannot follow: the server judges the arguments alone


def _validator_or_none(schema: dict[str, Any]) -> Validator | None:
    """A validator of a server's input schema; none when the schema is broken.

    Checking here gives every kind of tool the same one-line error, and guards
    servers that trust their input; a schema roost cannot use is left to the
    server, which may still accept the call.
    """
    try:
        return schema_validator(schema)
    except InvalidSchema:
        return None


async def _open(server: _Server, name: str, config: McpServerConfig, folder: Path) -> None:
    """Starts ``server``'s connection in a task of its own; returns once it is ready.

    A start that fails raises ToolFailure only after the server has been stopped.
    """
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    server.task = asyncio.create_task(_serve(server, name, config, folder, ready))
    await ready


async def _serve(
    server: _Server, name: str, config: McpServerConfig, folder: Path, ready: asyncio.Future[None]
) -> None:
    """Runs one connection from start to stop, in one task (the SDK's scopes stay in it).

    The start runs under a deadline (the server's ``timeout``) in a cancel scope that
    ``halt`` can also cancel; leaving it runs the SDK's shutdown to its end, which
    stops the server's process group, before ``ready`` reports the failure.
    """
    tail = StderrTail() if isinstance(config, StdioServer) else None
    failure: str | None = None
    startup = server.startup = anyio.CancelScope(deadline=anyio.current_time() + config.timeout)
    try:
        with startup:
            async with AsyncExitStack() as stack:
                read, write = await _transport(stack, config, folder, tail)
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                server.tools = await _list_all(session)
                server.session = session
                startup.deadline = math.inf
                server.startup = None
                ready.set_result(None)
                await server.stop.wait()
        if startup.cancelled_caught and not server.stop.is_set():
            failure = _late(name, config)
    except Exception as exc:
        failure = _start_failure(name, config, exc, tail)
    finally:
        server.session = None
        if tail is not None:
            tail.close()
        if not ready.done():
            ready.set_exception(ToolFailure(failure or f"MCP server {name!r} was stopped"))


def _late(name: str, config: McpServerConfig) -> str:
    return f"MCP server {name!r} did not answer within {config.timeout:g}s"


# An MCP command that names these means the interpreter running roost: the environment
# that holds roost's packages, whether or not it is first on PATH (a venv not activated).
_OWN_PYTHON = ("python", "python3")


def server_command(command: str, folder: Path) -> str:
    """The program a stdio server's ``command`` starts: ``python``/``python3`` the interpreter
    running roost, a relative path from the flow's folder, else as written (found on PATH)."""
    if command in _OWN_PYTHON and sys.executable:
        return sys.executable
    if "/" in command and not Path(command).is_absolute():
        return str(folder / command)
    return command


async def _transport(
    stack: AsyncExitStack, config: McpServerConfig, folder: Path, tail: StderrTail | None
) -> Any:
    """Opens the server's transport on ``stack``; gives its (read, write) streams."""
    if isinstance(config, StdioServer):
        assert tail is not None
        command = server_command(config.command, folder)
        params = StdioServerParameters(
            command=command, args=list(config.args), env=dict(config.env) or None, cwd=folder
        )
        try:
            return await stack.enter_async_context(stdio_client(params, errlog=tail.writer))
        finally:
            tail.child_started()  # the child holds the pipe's write end now (or never will)
    assert isinstance(config, HttpServer)
    if config.transport == "sse":
        # The older transport: a GET stream for the server's messages, POSTs for ours.
        return await stack.enter_async_context(
            sse_client(
                config.url,
                headers=config.headers or None,
                timeout=30,
                sse_read_timeout=SSE_SILENCE,
            )
        )
    client = None
    if config.headers:
        # The SDK leaves a client it was given open, so the stack closes it.
        client = await stack.enter_async_context(
            httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(30, read=300))
        )
    return await stack.enter_async_context(streamable_http_client(config.url, http_client=client))


async def _list_all(session: ClientSession) -> list[mcp_types.Tool]:
    result = await session.list_tools()
    tools = list(result.tools)
    while result.next_cursor:
        params = mcp_types.PaginatedRequestParams(cursor=result.next_cursor)
        result = await session.list_tools(params=params)
        tools.extend(result.tools)
    return tools


async def _call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as exc:
        return ToolOutcome(f"MCPError: {exc.message}", is_error=True)
    except Exception as exc:
        return ToolOutcome(f"{type(exc).__name__}: {exc}", is_error=True)
    return ToolOutcome(_content_text(result), is_error=bool(result.is_error))


def _content_text(result: mcp_types.CallToolResult) -> str:
    """Text blocks joined by newlines; other blocks (images, resources) as JSON."""
    parts = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        else:
            parts.append(block.model_dump_json(by_alias=True, exclude_none=True))
    if not parts and result.structured_content is not None:
        return result_text(result.structured_content)
    return "\n".join(parts)


def _start_failure(
    name: str, config: McpServerConfig, exc: Exception, tail: StderrTail | None
) -> str:
    where = config.command if isinstance(config, StdioServer) else config.url
    said = tail.last_line() if tail is not None else ""
    said = f"; it said: {said}" if said else ""
    leaf = _leaf(exc)
    text = str(leaf).strip().splitlines()
    error = f"{type(leaf).__name__}: {text[0]}" if text else type(leaf).__name__
    hint = _other_transport(config, leaf)
    return f"MCP server {name!r} ({where}) failed to start: {error}{said}{hint}"


def _leaf(exc: BaseException) -> BaseException:
    """The innermost real error of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _other_transport(config: McpServerConfig, leaf: BaseException) -> str:
    """A hint when an HTTP server answered but not as its transport expects.

    The two HTTP transports often live on one server at /mcp and /sse: a server
    that answers at all, but not in the flow's transport, may speak the other.
    """
    if not isinstance(config, HttpServer) or isinstance(leaf, httpx2.TransportError | OSError):
        return ""  # nothing answered: no transport would have done better
    other = "sse" if config.transport == "streamable-http" else "streamable-http"
    return f" (if the server speaks {other}, write transport: {other})"


def _wait_done(server: _Server, loop: asyncio.AbstractEventLoop) -> None:
    """Waits (bounded) until the server's task has run its shutdown to the end."""
    task = server.task
    if task is None:
        return

    async def wait() -> None:
        try:
            await asyncio.wait_for(asyncio.shield(task), _CLOSE_WAIT)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        except Exception:  # the task's own failure was reported where it started
            return

    with_future = asyncio.run_coroutine_threadsafe(wait(), loop)
    # Best effort: a server that will not stop was already signalled with SIGKILL.
    with suppress(Exception):
        with_future.result(_CLOSE_WAIT + 5)


@atexit.register
def _close_all() -> None:
    for hub in list(_LIVE):
        hub.close()
