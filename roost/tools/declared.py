"""Each kind of tool as a flow declares it, with nothing run: what a replay offers a model.

A run file is data: replaying it must not start the MCP servers its flow names
or import its tools' modules. So each kind of tool describes itself from the
flow alone (its wire name, description and parameters, and the settings the
tool loop reads: approval, direct_output, timeout, background): roost's own
tools (``memory#``, ``builtin#``, ``skill#read``) in their modules, the flow's
tools from what is written for them. An MCP server's tool names, which only
the server knows, come from the caller (a replay takes those its record lists).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.flow.tool_refs import resolve_reference
from roost.messages import ToolSpec
from roost.tools.base import Declared
from roost.tools.names import wire_name

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.flow.models import Flow, FlowTool, McpTool, PythonTool
    from roost.flow.tool_refs import Target


def declared_tools(flow: Flow, agent: str, server_tools: Sequence[str]) -> list[Declared]:
    """The tools ``agent`` lists under ``functions``, in order, named as the live toolbox names
    them; ToolFailure, in the toolbox's words, for a reference that names nothing.

    ``server_tools`` are wire names seen in the run: an MCP server's tools are
    those of them that start with its entry's name.
    """
    config = flow.agents.get(agent)
    tools: dict[str, Declared] = {}
    for reference in config.functions if config else []:
        for target in resolve_reference(flow, reference):
            for tool in _declared(flow, target, server_tools):
                tools.setdefault(tool.spec.name, tool)
    return list(tools.values())


def declared_skill_read() -> Declared:
    """``skill#read`` as the live toolbox offers it to an agent that lists skills."""
    from roost.flow.skills import SKILL_READ
    from roost.tools.skill_tool import skill_declared

    return skill_declared(wire_name(SKILL_READ))


def configured(wire: str, config: PythonTool | FlowTool | McpTool) -> Declared:
    """A tool of the flow's own as its ``tools`` entry describes it (code or server unread)."""
    spec = ToolSpec(
        name=wire,
        description=config.description or "",
        **({"parameters": config.parameters} if config.parameters else {}),
    )
    background = getattr(config, "background", False)
    approval = config.approval == "always"
    return Declared(spec, config.direct_output, approval, config.timeout, background)


def _declared(flow: Flow, target: Target, server_tools: Sequence[str]) -> list[Declared]:
    """The declared tools of one target (an MCP target's: those ``server_tools`` name)."""
    from roost.flow.models import McpTool

    wire = wire_name(target.name)
    if target.kind == "memory":
        from roost.tools.memory_tool import memory_declared

        return [memory_declared(target.tool or "", wire)]
    if target.kind == "builtin":
        from roost.tools.builtin import builtin_declared

        return [builtin_declared(target.tool or "", wire, flow.builtins)]
    config = target.config
    assert config is not None  # an entry or MCP target carries its settings
    if isinstance(config, McpTool) and target.tool is None:
        prefix = wire + "__"
        return [configured(name, config) for name in server_tools if name.startswith(prefix)]
    if isinstance(config, McpTool):
        return [configured(wire_name(f"{target.name}#{target.tool}"), config)]
    return [configured(wire, config)]
