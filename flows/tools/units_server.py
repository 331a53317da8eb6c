"""A tiny MCP server over stdio, written with the official SDK (mcp >= 2: MCPServer)."""

from typing import Literal

from mcp.server.mcpserver import MCPServer

server = MCPServer("units")

MILES_PER_KM = 0.621371


@server.tool()
def convert(value: float, unit: Literal["km", "mi"]) -> str:
    """Convert a distance between kilometres and miles."""
    if unit == "km":
        return f"{value:g} km = {value * MILES_PER_KM:.1f} mi"
    return f"{value:g} mi = {value / MILES_PER_KM:.1f} km"


if __name__ == "__main__":
    server.run()
