"""Load-time checks of a flow's tools, so that a broken tool fails validation, not a run.

Each finding is a ``Problem`` located at the key that is wrong: a Python tool
whose module does not import (or exits while importing), whose name is not
callable or whose parameters pydantic cannot describe; declared ``parameters``
that are not valid JSON Schema; a sub-flow file that is missing or invalid, or
that leads back to a flow already on the way (recursion); an ``mcp:`` tool
naming an undeclared server; a stdio MCP server whose command cannot be found;
file tools (``builtin#read_file``...) whose root folder is not there.
"""

from __future__ import annotations

import os
import shutil
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import Problem, ToolFailure
from roost.flow.models import (
    FILE_TOOLS,
    Flow,
    FlowTool,
    McpTool,
    PythonHook,
    PythonTool,
    StdioServer,
    ToolGroup,
    flow_file,
    flow_folder,
    lists_file_tools,
)
from roost.flow.route_checks import python_conditions
from roost.tools.arguments import InvalidSchema, schema_validator
from roost.tools.loader import load_callable
from roost.tools.names import wire_name
from roost.tools.python_tool import python_tool
from roost.tools.subflow import load_subflow

if TYPE_CHECKING:
    from collections.abc import Iterator

Keys = tuple[str | int, ...]

# Set while a flow's sub-flows are being followed: loading a sub-flow may check
# its tools in turn, and those nested checks leave sub-flows to the outer one.
_FOLLOWING: ContextVar[bool] = ContextVar("roost_following_subflows", default=False)


def check_flow_tools(flow: Flow) -> list[Problem]:
    """Every problem with ``flow``'s tools and MCP servers, each naming the tool and its line."""
    folder = flow_folder(flow)
    problems: list[Problem] = []
    for name, keys, config in _entries(flow):
        if isinstance(config, PythonTool):
            problems += _check_python(flow, name, keys, config, folder)
        elif isinstance(config, FlowTool):
            problems += _check_parameters(flow, name, keys, config)
            if not _FOLLOWING.get():
                problems += _check_subflow(flow, name, keys, config, folder)
        elif config.mcp not in flow.mcp_servers:
            message = f"tool {name!r}: MCP server {config.mcp!r} is not declared under mcp_servers"
            problems.append(_problem(flow, (*keys, "mcp"), message))
    for server, settings in flow.mcp_servers.items():
        if isinstance(settings, StdioServer) and not _command_exists(settings.command, folder):
            message = f"MCP server {server!r}: command {settings.command!r} not found"
            problems.append(_problem(flow, ("mcp_servers", server, "command"), message))
    problems += _check_file_root(flow, folder)
    problems += _check_hooks(flow, folder)
    problems += _check_conditions(flow, folder)
    return sorted(problems, key=lambda p: (p.line, p.col))


def _check_file_root(flow: Flow, folder: Path) -> list[Problem]:
    """A problem at the first use of a built-in file tool when their root is not a folder
    (found when the flow is checked, not when a model first calls the tool)."""
    root = flow.builtins.files.root
    if not lists_file_tools(flow) or (folder / root).is_dir():
        return []
    for agent, config in flow.agents.items():
        for index, reference in enumerate(config.functions):
            if reference.removeprefix("@@").strip() in FILE_TOOLS:
                message = f"{reference!r}: the root folder {root!r} of the file tools is missing"
                return [_problem(flow, ("agents", agent, "functions", index), message)]
    return []


def _check_conditions(flow: Flow, folder: Path) -> list[Problem]:
    """A route's ``python`` condition that does not import or is not callable."""
    problems: list[Problem] = []
    for keys, target in python_conditions(flow):
        try:
            load_callable(target, folder)
        except ToolFailure as exc:
            problems.append(_problem(flow, keys, f"python condition {target!r}: {exc}"))
    return problems


def _check_hooks(flow: Flow, folder: Path) -> list[Problem]:
    """A Python hook that does not import or is no callable; a command that is not there."""
    problems: list[Problem] = []
    for keys, hook in flow.hook_entries():
        stage, index = keys[-2], keys[-1]
        place = f"hooks.{stage}[{index}]" + (
            f" of agent {keys[1]!r}" if keys[0] == "agents" else ""
        )
        if isinstance(hook, PythonHook):
            try:
                load_callable(hook.python, folder)
            except ToolFailure as exc:
                problems.append(_problem(flow, (*keys, "python"), f"{place}: {exc}"))
        elif not _command_exists(hook.command, folder):
            message = f"{place}: command {hook.command!r} not found"
            problems.append(_problem(flow, (*keys, "command"), message))
    return problems


def _entries(flow: Flow) -> Iterator[tuple[str, Keys, PythonTool | FlowTool | McpTool]]:
    for name, config in flow.tools.items():
        if isinstance(config, ToolGroup):
            for child, member in config.tools.items():
                yield f"{name}#{child}", ("tools", name, "tools", child), member
        else:
            yield name, ("tools", name), config


def _check_python(
    flow: Flow, name: str, keys: Keys, config: PythonTool, folder: Path
) -> list[Problem]:
    try:
        python_tool(name, wire_name(name), config, folder)
    except ToolFailure as exc:
        message = str(exc) if str(exc).startswith("tool ") else f"tool {name!r}: {exc}"
        key = "parameters" if isinstance(exc, InvalidSchema) else "python"
        return [_problem(flow, (*keys, key), message)]
    return []


def _check_parameters(flow: Flow, name: str, keys: Keys, config: FlowTool) -> list[Problem]:
    if config.parameters is None:
        return []
    try:
        schema_validator(config.parameters)
    except InvalidSchema as exc:
        return [_problem(flow, (*keys, "parameters"), f"tool {name!r}: {exc}")]
    return []


def _check_subflow(
    flow: Flow, name: str, keys: Keys, config: FlowTool, folder: Path
) -> list[Problem]:
    path = (folder / config.flow).resolve()
    token = _FOLLOWING.set(True)
    try:
        cycle = _cycle(path, [file.resolve()] if (file := flow_file(flow)) else [])
    except ToolFailure as exc:
        return [_problem(flow, (*keys, "flow"), f"tool {name!r}: {exc}")]
    finally:
        _FOLLOWING.reset(token)
    if cycle:
        chain = " -> ".join(p.name for p in cycle)
        return [
            _problem(flow, (*keys, "flow"), f"tool {name!r}: sub-flows call each other: {chain}")
        ]
    return []


def _cycle(path: Path, trail: list[Path]) -> list[Path]:
    """The chain of flow files from ``trail`` that comes back to a file already on it, if any."""
    if path in trail:
        return [*trail[trail.index(path) :], path]
    flow = load_subflow(path)
    folder = path.parent
    for _, _, config in _entries(flow):
        if isinstance(config, FlowTool):
            child = (folder / config.flow).resolve()
            if child.is_file() and (found := _cycle(child, [*trail, path])):
                return found
    return []


def _command_exists(command: str, folder: Path) -> bool:
    if os.sep in command or "/" in command:
        candidate = Path(command) if Path(command).is_absolute() else folder / command
        return candidate.is_file() and os.access(candidate, os.X_OK)
    return shutil.which(command) is not None


def _problem(flow: Flow, keys: Keys, message: str) -> Problem:
    located = getattr(flow, "problem", None)
    if callable(located):
        problem = located(keys, message)
        assert isinstance(problem, Problem)
        return problem
    return Problem(flow.path, 1, 1, message)
