"""What agents may call: ``tools:``, ``mcp_servers:``, ``hooks:`` and ``builtins:``."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from roost.flow.models.base import Strict

# --------------------------------------------------------------------------- tools


class _ToolCommon(Strict):
    description: str | None = None
    parameters: dict[str, Any] | None = Field(
        None, description="JSON Schema of the arguments; derived from type hints when absent."
    )
    direct_output: bool = Field(False, description="The tool's result becomes the reply.")
    approval: Literal["never", "always"] = Field(
        "never", description="always: a human says yes first."
    )
    timeout: float = Field(60, gt=0, description="Seconds.")


class PythonTool(_ToolCommon):
    python: str = Field(
        ..., pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", description='"module:function"'
    )


class FlowTool(_ToolCommon):
    flow: str = Field(..., description="Path of another flow, run as a sub-agent.")
    # background delegation
    background: bool = Field(
        False,
        description="Start the sub-flow and answer with a task id at once; its result "
        "arrives later as a message to the agent.",
    )


class McpTool(_ToolCommon):
    mcp: str = Field(..., description="Name of a server under mcp_servers.")


class ToolGroup(Strict):
    description: str | None = None
    tools: dict[str, PythonTool | FlowTool | McpTool]


ToolConfig = PythonTool | FlowTool | McpTool | ToolGroup


class StdioServer(Strict):
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(60, gt=0)
    # Named only so a flow may say it; a server started from a command always speaks stdio.
    transport: Literal["stdio"] = Field("stdio", description="stdio: roost starts the command.")


class HttpServer(Strict):
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(60, gt=0)
    # Some servers still speak only the older HTTP+SSE transport, so it is kept beside
    # streamable HTTP.
    transport: Literal["streamable-http", "sse"] = Field(
        "streamable-http",
        description="streamable-http (the url is the MCP endpoint) or sse (the url is the "
        "server's SSE endpoint, often ending in /sse).",
    )


McpServerConfig = StdioServer | HttpServer


# --------------------------------------------------------------------------- hooks (package: hooks)

HOOK_STAGES = ("before_tool", "after_tool", "before_reply")


class _HookCommon(Strict):
    timeout: float = Field(10, gt=0, description="Seconds the hook may take; past them it fails.")


class PythonHook(_HookCommon):
    python: str = Field(
        ...,
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
        description='"module:function", called with the call as a dict; returns the decision.',
    )


class CommandHook(_HookCommon):
    command: str = Field(..., description="A program given the call as JSON on standard input.")
    args: list[str] = Field(default_factory=list)


Hook = PythonHook | CommandHook


class Hooks(Strict):
    """Code that sees, and may refuse or change, tool calls and incoming messages."""

    before_tool: list[Hook] = Field(
        default_factory=list, description="Before a tool runs: allow, refuse, or change arguments."
    )
    after_tool: list[Hook] = Field(
        default_factory=list, description="After a tool ran: allow, refuse, or change its result."
    )
    before_reply: list[Hook] = Field(
        default_factory=list,
        description="Before an agent answers a message: allow, refuse, or rewrite the message.",
    )


# --------------------------------------------------------------------------- builtins
# The settings of the builtin#... tools: what each may read, write, fetch or run.

# The tools an agent lists as ``builtin#NAME``; a tool entry called ``builtin`` hides them.
BUILTIN_TOOLS = ("read_file", "write_file", "list_files", "http_get", "shell")
# A host http_get may fetch from: a name or an IPv4 address, ``*.`` for every subdomain.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
ALLOWED_HOST = rf"^(\*\.)?{_LABEL}(\.{_LABEL})*$"


class BuiltinFiles(Strict):
    """Where builtin#read_file, write_file and list_files work, and how much they move."""

    root: str = Field(
        ".",
        min_length=1,
        description="The folder the file tools may use, relative to the flow's folder; "
        "no path they are given leads out of it.",
    )
    max_bytes: int = Field(
        1_000_000, ge=1, description="Bytes read_file reads and write_file writes at most."
    )
    max_entries: int = Field(1000, ge=1, description="Entries list_files lists at most.")


def _host_name(host: str) -> str:
    if not re.fullmatch(ALLOWED_HOST, host):
        raise PydanticCustomError(
            "builtin_host",
            "'{host}' is no host name: write a name such as example.com or *.example.com, "
            "without scheme, port or path",
            {"host": host},
        )
    return host.lower()


class BuiltinHttp(Strict):
    """What builtin#http_get may fetch."""

    hosts: list[Annotated[str, AfterValidator(_host_name)]] = Field(
        default_factory=list,
        description="Hosts http_get may fetch from (example.com; *.example.com for its "
        "subdomains); http_get needs at least one.",
    )
    max_bytes: int = Field(1_000_000, ge=1, description="Bytes of a response body at most.")
    timeout: float = Field(10, gt=0, description="Seconds for the whole request.")


class BuiltinShell(Strict):
    """How builtin#shell runs a command."""

    approval: Literal["never", "always"] = Field(
        "always", description="always (the default): a person says yes before each command."
    )
    timeout: float = Field(30, gt=0, description="Seconds a command may run; then it is killed.")
    max_output: int = Field(
        16000, ge=1, description="Bytes of a command's output (stdout and stderr) kept at most."
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables the command gets besides PATH, HOME, LANG and TMPDIR.",
    )


# The built-in tools that work in the root folder, which must exist.
FILE_TOOLS = ("builtin#read_file", "builtin#write_file", "builtin#list_files")


class Builtins(Strict):
    """Settings of roost's built-in tools, which an agent lists as builtin#NAME."""

    files: BuiltinFiles = Field(default_factory=BuiltinFiles)
    http: BuiltinHttp = Field(default_factory=BuiltinHttp)
    shell: BuiltinShell = Field(default_factory=BuiltinShell)
