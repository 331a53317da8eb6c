"""What an agent's ``functions`` entries name: one resolver for the checks, the toolbox and replay.

A reference is ``name`` or ``@@name`` (a tool entry: a group gives all its
tools, an ``mcp:`` entry all its server's tools), ``group#child`` (a child of a
group), ``ENTRY#tool`` (one tool of the server an ``mcp:`` entry exposes),
``SERVER#tool`` (one tool of a server under ``mcp_servers``), ``memory#NAME``
or ``builtin#NAME``. A tool entry of the name comes first: a flow's own
``memory`` or ``builtin`` entry hides roost's, and a Python tool ``X`` makes
``X#tool`` an error even beside an MCP server ``X``.

``resolve_reference`` is pure: it reads the flow only, so the load-time check,
the live toolbox (which builds the tools) and a replay (which answers them from
the record) agree on what each reference names. A reference that names nothing
raises ``UnresolvedReference``: its text is the one a run reports, its
``checked`` the located one the flow's check reports, with a hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from roost.errors import ToolFailure
from roost.flow.describe import did_you_mean
from roost.flow.models import BUILTIN_TOOLS, MEMORY_TOOLS, FlowTool, McpTool, PythonTool, ToolGroup

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from roost.flow.models import Flow

BUILTIN = "builtin"
MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A parsed reference: ``parent`` is the tool entry, ``child`` its member if any."""

    parent: str
    child: str | None = None

    @property
    def text(self) -> str:
        """The reference as a flow writes it (without ``@@``)."""
        return self.parent if self.child is None else f"{self.parent}#{self.child}"


def parse_ref(reference: str) -> ToolRef:
    """Splits ``@@name``, ``name`` or ``group#child`` into its parts."""
    text = reference.removeprefix("@@").strip()
    parent, sep, child = text.partition("#")
    return ToolRef(parent, child if sep else None)


@dataclass(frozen=True, slots=True)
class Target:
    """One tool a reference names, or all the tools of one MCP server.

    ``kind`` ``entry``: a Python or sub-flow tool, ``config`` its settings;
    ``mcp``: ``config`` the ``mcp:`` settings, ``tool`` the server's tool named
    (None: all of them); ``memory`` and ``builtin``: ``tool`` is roost's tool.
    ``name`` is the flow's name for it (``lookup``, ``math#add``,
    ``memory#recall``); for ``mcp``, the prefix of its tools' names.
    """

    kind: Literal["entry", "mcp", "memory", "builtin"]
    name: str
    config: PythonTool | FlowTool | McpTool | None = None
    tool: str | None = None


class UnresolvedReference(ToolFailure):
    """A reference that names no tool: ``str()`` as a run says it, ``checked`` as the check."""

    def __init__(self, text: str, checked: str) -> None:
        super().__init__(text)
        self.checked = checked


def resolve_reference(
    flow: Flow,
    reference: str,
    hints: Callable[[str, Iterable[str]], str] = did_you_mean,
) -> list[Target]:
    """What ``reference`` names in ``flow``, in order; UnresolvedReference when nothing."""
    ref = parse_ref(reference)
    parent, child = ref.parent, ref.child
    entry = flow.tools.get(parent)
    if entry is None and parent == MEMORY:
        return [_memory(flow, reference, child or "", hints)]
    if entry is None and parent == BUILTIN:
        return [_builtin(reference, child or "", hints)]
    if isinstance(entry, ToolGroup):
        return _group(parent, child, entry, hints)
    if isinstance(entry, McpTool):
        return [_server_tool(reference, parent, child, entry)]
    if entry is not None:
        if child is None:
            return [Target("entry", parent, entry)]
        raise UnresolvedReference(
            f"tool {parent!r} is not a group: {reference!r} names nothing",
            f"tool {parent!r} is neither a group nor an MCP tool, so {reference!r} names nothing",
        )
    if child is not None and parent in flow.mcp_servers:
        return [_server_tool(reference, parent, child, server_settings(flow, parent))]
    if child is None:
        hint = hints(parent, _references(flow))
        checked = f"no tool named {parent!r} under tools{hint}"
    else:
        hint = hints(parent, [*flow.tools, *flow.mcp_servers, BUILTIN])
        checked = f"no tool group or MCP tool named {parent!r}{hint}"
    raise UnresolvedReference(f"unknown tool {reference!r}", checked)


def server_settings(flow: Flow, server: str) -> McpTool:
    """The first ``mcp:`` entry exposing ``server``, in the flow's order; else defaults.

    So ``SERVER#tool`` gets the timeout, approval and direct_output a user gave
    the server's tools, whichever way the agent names them.
    """
    for config in flow.tools.values():
        members = config.tools.values() if isinstance(config, ToolGroup) else [config]
        for member in members:
            if isinstance(member, McpTool) and member.mcp == server:
                return member
    return McpTool(mcp=server)


def _server_tool(reference: str, entry: str, child: str | None, config: McpTool) -> Target:
    """The tool ``child`` of the server ``config`` names (all of them for None)."""
    if child == "":
        text = f"{reference!r} names no tool: write {entry}#TOOL"
        raise UnresolvedReference(text, text)
    return Target("mcp", entry, config, child)


def _group(
    group: str,
    child: str | None,
    entry: ToolGroup,
    hints: Callable[[str, Iterable[str]], str],
) -> list[Target]:
    """The children of ``group`` (``child`` alone when given), an MCP member as all its tools."""
    if child is not None and child not in entry.tools:
        raise UnresolvedReference(
            f"tool group {group!r} has no tool {child!r}",
            f"tool group {group!r} has no tool {child!r}{hints(child, entry.tools)}",
        )
    found: list[Target] = []
    for name in [child] if child is not None else list(entry.tools):
        member = entry.tools[name]
        if isinstance(member, McpTool):
            found.append(Target("mcp", f"{group}#{name}", member))
        else:
            found.append(Target("entry", f"{group}#{name}", member))
    return found


def _memory(
    flow: Flow, reference: str, name: str, hints: Callable[[str, Iterable[str]], str]
) -> Target:
    """``memory#name``, which needs the flow's ``memory:`` section."""
    if name not in MEMORY_TOOLS:
        names = ", ".join(f"memory#{tool}" for tool in MEMORY_TOOLS)
        raise UnresolvedReference(
            f"there is no memory tool 'memory#{name}'",
            f"{reference!r} is no memory tool{hints(name, MEMORY_TOOLS)}; there are {names}",
        )
    if flow.memory is None:
        raise UnresolvedReference(
            f"unknown tool {reference!r}",
            f"{reference!r} needs a memory: section in the flow (memory: {{scope: flow}})",
        )
    return Target("memory", f"memory#{name}", tool=name)


def _builtin(reference: str, name: str, hints: Callable[[str, Iterable[str]], str]) -> Target:
    """``builtin#name``, one of roost's built-in tools."""
    if name not in BUILTIN_TOOLS:
        names = ", ".join(f"builtin#{tool}" for tool in BUILTIN_TOOLS)
        raise UnresolvedReference(
            f"there is no built-in tool 'builtin#{name}'",
            f"{reference!r} is no built-in tool{hints(name, BUILTIN_TOOLS)}; there are {names}",
        )
    return Target("builtin", f"builtin#{name}", tool=name)


def _references(flow: Flow) -> Iterator[str]:
    """Every name an agent's functions may use: entries and ``group#child``."""
    for name, entry in flow.tools.items():
        yield name
        if isinstance(entry, ToolGroup):
            yield from (f"{name}#{child}" for child in entry.tools)
