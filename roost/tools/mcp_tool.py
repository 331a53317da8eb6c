"""MCP servers (``mcp_servers:``) and their tools (``mcp: SERVER``), through the official SDK.

Every connection of one toolbox lives on a private event loop in a daemon
thread that ``McpHub`` owns. That keeps the SDK's task groups entered and left
in one task, lets a listing happen from the synchronous toolbox call, and
survives the engine running its steps in several ``asyncio.run`` calls. A
server starts on first use, its tools are listed once, and ``close()`` (or
``aclose()``) stops every server process; a hub never closed is closed when
the interpreter exits.

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
import os
import tempfile
import threading
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO, cast

import httpx2
import mcp
import mcp_types
from jsonschema.protocols import Validator
from mcp import ClientSession, StdioServerParameters, stdio_client
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
_CLOSE_WAIT = 10.0


@dataclass
class _Connection:
    session: ClientSession
    tools: list[mcp_types.Tool]
    stop: asyncio.Event
    task: asyncio.Task[None] | None = None
    errlog: IO[str] | None = field(default=None, repr=False)


class McpHub:
    """The open connections to a flow's MCP servers, keyed by server name."""

    def __init__(self, servers: dict[str, McpServerConfig], folder: Path) -> None:
        self._servers = servers
        self._folder = folder.resolve()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[str, _Connection] = {}
        self._lock = threading.Lock()

    def list_tools(self, server: str) -> list[mcp_types.Tool]:
        """The server's tools, starting it on first use; raises ToolFailure naming it."""
        with self._lock:
            if server not in self._connections:
                self._connections[server] = self._connect(server)
            return self._connections[server].tools

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Calls one tool; a failure of the tool or of the connection is an error outcome."""
        connection = self._connections.get(server)
        if connection is None or self._loop is None:
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
        """Stops every server and the hub's thread; safe to call more than once."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        for connection in self._connections.values():
            loop.call_soon_threadsafe(connection.stop.set)
        for connection in self._connections.values():
            _wait_done(connection, loop)
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

    def _connect(self, server: str) -> _Connection:
        config = self._servers.get(server)
        if config is None:
            raise ToolFailure(f"MCP server {server!r} is not declared under mcp_servers")
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(_open(server, config, self._folder), loop)
        try:
            return future.result(config.timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolFailure(
                f"MCP server {server!r} did not answer within {config.timeout:g}s"
            ) from None

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


async def _open(name: str, config: McpServerConfig, folder: Path) -> _Connection:
    """Starts a connection in its own task (the SDK's scopes stay in that task)."""
    ready: asyncio.Future[_Connection] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(_serve(name, config, folder, ready))
    try:
        connection = await ready
    except BaseException:
        task.cancel()
        raise
    connection.task = task
    return connection


async def _serve(
    name: str, config: McpServerConfig, folder: Path, ready: asyncio.Future[_Connection]
) -> None:
    # The server's stderr is kept to quote it when the server fails to start.
    errlog = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
    try:
        async with AsyncExitStack() as stack:
            read, write = await _transport(stack, config, folder, errlog)
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            tools = await _list_all(session)
            connection = _Connection(session, tools, asyncio.Event(), errlog=errlog)
            ready.set_result(connection)
            await connection.stop.wait()
    except Exception as exc:
        if not ready.done():
            ready.set_exception(ToolFailure(_start_failure(name, config, exc, errlog)))
    finally:
        errlog.close()


async def _transport(
    stack: AsyncExitStack, config: McpServerConfig, folder: Path, errlog: TextIO
) -> Any:
    """Opens the server's transport on ``stack``; gives its (read, write) streams."""
    if isinstance(config, StdioServer):
        command = config.command
        if "/" in command and not Path(command).is_absolute():
            command = str(folder / command)
        params = StdioServerParameters(
            command=command, args=list(config.args), env=dict(config.env) or None, cwd=folder
        )
        return await stack.enter_async_context(stdio_client(params, errlog=errlog))
    assert isinstance(config, HttpServer)
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


def _start_failure(name: str, config: McpServerConfig, exc: Exception, errlog: IO[str]) -> str:
    where = config.command if isinstance(config, StdioServer) else config.url
    reason = _leaf(exc)
    errlog.seek(0)
    tail = [line.strip() for line in errlog.read().splitlines() if line.strip()][-1:]
    said = f"; it said: {tail[0]}" if tail else ""
    return f"MCP server {name!r} ({where}) failed to start: {reason}{said}"


def _leaf(exc: BaseException) -> str:
    """The innermost real error of an exception group, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _wait_done(connection: _Connection, loop: asyncio.AbstractEventLoop) -> None:
    task = connection.task
    if task is None:
        return

    async def wait() -> None:
        try:
            await asyncio.wait_for(asyncio.shield(task), _CLOSE_WAIT)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()

    with_future = asyncio.run_coroutine_threadsafe(wait(), loop)
    # Best effort: a server that will not stop is killed by the SDK's shutdown or at exit.
    with suppress(Exception):
        with_future.result(_CLOSE_WAIT + 5)


@atexit.register
def _close_all() -> None:
    for hub in list(_LIVE):
        hub.close()
