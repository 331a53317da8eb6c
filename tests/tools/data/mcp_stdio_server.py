"""A small MCP server over stdio, written with the SDK's own server class."""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers on the server."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.tool()
def explode(message: str) -> str:
    """Always fails, with a message for the caller."""
    raise ToolError(message)


@server.tool()
async def wait(seconds: float) -> str:
    """Sleep, then answer."""
    import anyio

    await anyio.sleep(seconds)
    return "done"


@server.tool()
def pid() -> int:
    """The server process's id."""
    import os

    return os.getpid()


if __name__ == "__main__":
    server.run()
