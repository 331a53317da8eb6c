"""An agent's tools: resolving ``functions:`` references, once per run.

``Toolbox(flow)`` is what the engine calls as ``tools(agent, latest_user_text)``.
Tools are built on first use and kept for the toolbox's life (so an MCP
server is started and listed once per run); an agent with a ``tool_limit``
is offered only its best-matching tools for the latest user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import ToolFailure
from roost.flow.describe import did_you_mean
from roost.flow.models import Flow, FlowTool, McpTool, PythonTool, flow_folder
from roost.flow.redact import redact
from roost.flow.skills import SKILL_READ
from roost.flow.tool_refs import Target, resolve_reference
from roost.tools.builtin import BuiltinTool
from roost.tools.memory_tool import MemoryTool
from roost.tools.names import wire_name
from roost.tools.python_tool import python_tool
from roost.tools.ranking import best_matches
from roost.tools.skill_tool import SkillReadTool
from roost.tools.subflow import NoSubflows, SubflowRunner, subflow_tool

if TYPE_CHECKING:  # the MCP SDK is imported only by a flow that uses an MCP server
    from collections.abc import Sequence

    from roost.ports import MemoryBank
    from roost.tools.base import Tool
    from roost.tools.mcp_tool import McpHub


class Toolbox:
    """Every tool a flow's agents use; call it as ``toolbox(agent, latest_user_text)``."""

    def __init__(
        self,
        flow: Flow,
        *,
        runner: SubflowRunner | None = None,
        memory: MemoryBank | None = None,
        run: str = "",
    ) -> None:
        self.flow = flow
        self._memory = memory
        self._run = run
        self._folder = flow_folder(flow)
        self._runner: SubflowRunner = runner if runner is not None else NoSubflows()
        self._hub: McpHub | None = None  # made when an MCP tool is first needed
        self._built: dict[str, Tool] = {}
        self._agents: dict[str, list[Tool]] = {}

    def __call__(self, agent: str, text: str = "") -> Sequence[Tool]:
        """The tools offered to ``agent`` for a reply to ``text``."""
        try:
            tools = self.agent_tools(agent)
        except ToolFailure as exc:
            # A server URL or command may hold a value read from the environment.
            raise ToolFailure(redact(str(exc), self.flow.secrets)) from None
        limit = self.flow.agents[agent].tool_limit if agent in self.flow.agents else None
        if limit is not None and len(tools) > limit:
            documents = [f"{tool.spec.name} {tool.spec.description}" for tool in tools]
            tools = [tools[i] for i in best_matches(text, documents, limit)]
        # skill#read comes with the skills its system prompt lists: never ranked out.
        return [*tools, *self._skill_tools(agent)]

    def agent_tools(self, agent: str) -> list[Tool]:
        """Every tool ``agent`` lists under ``functions``, in that order, without duplicates."""
        if agent not in self._agents:
            config = self.flow.agents.get(agent)
            tools: list[Tool] = []
            for reference in config.functions if config else []:
                for tool in self.resolve(reference, agent):
                    if all(tool is not seen for seen in tools):
                        tools.append(tool)
            self._agents[agent] = tools
        return self._agents[agent]

    def resolve(self, reference: str, agent: str = "") -> list[Tool]:
        """The tools one ``functions`` entry names (as ``resolve_reference`` reads it),
        built; raises ToolFailure when it names none."""
        tools: list[Tool] = []
        for target in resolve_reference(self.flow, reference):
            tools.extend(self._tools(target, agent))
        return tools

    def _tools(self, target: Target, agent: str) -> list[Tool]:
        """The live tools of one target: an MCP target's are listed from its server."""
        if target.kind == "memory":
            return [self._memory_tool(target.tool or "", agent)]
        if target.kind == "builtin":
            return [self._builtin_tool(target.tool or "")]
        config = target.config
        if isinstance(config, McpTool):
            return self._mcp_tools(target.name, target.tool, config)
        assert config is not None  # an entry target carries its settings
        return [self._build(target.name, config)]

    def close(self) -> None:
        """Stops the MCP servers this toolbox started."""
        if self._hub is not None:
            self._hub.close()

    async def aclose(self) -> None:
        """``close()`` for async callers."""
        if self._hub is not None:
            await self._hub.aclose()

    def _memory_tool(self, name: str, agent: str) -> Tool:
        scope = self.flow.memory_scope(agent)
        if self._memory is None or scope is None:
            raise ToolFailure("memory#... tools need a run store to keep the memory in")
        key = f"memory#{name}@{agent}"  # one per agent: the scope may differ
        if key not in self._built:
            wire = wire_name(f"memory#{name}")
            self._built[key] = MemoryTool(name, wire, scope, self._memory, self._run)
        return self._built[key]

    def _builtin_tool(self, name: str) -> Tool:
        """``builtin#name``, one for the whole flow (its settings are the flow's)."""
        key = f"builtin#{name}"
        if key not in self._built:
            self._built[key] = BuiltinTool(name, wire_name(key), self.flow.builtins, self._folder)
        return self._built[key]

    def _skill_tools(self, agent: str) -> list[Tool]:
        """``skill#read`` for an agent that lists skills; nothing for one that does not."""
        config = self.flow.agents.get(agent)
        if config is None or not config.skills:
            return []
        key = f"{SKILL_READ}@{agent}"  # one per agent: each reads its own skills
        if key not in self._built:
            self._built[key] = SkillReadTool(wire_name(SKILL_READ), self.flow, agent)
        return [self._built[key]]

    def _build(self, name: str, config: PythonTool | FlowTool) -> Tool:
        if name not in self._built:
            wire = self._unique_wire(name)
            if isinstance(config, PythonTool):
                self._built[name] = python_tool(name, wire, config, self._folder)
            else:
                self._built[name] = subflow_tool(wire, config, self._folder, self._runner)
        return self._built[name]

    def _mcp_tools(self, entry: str, child: str | None, config: McpTool) -> list[Tool]:
        from roost.tools.mcp_tool import McpHub, McpServerTool

        if self._hub is None:
            self._hub = McpHub(dict(self.flow.mcp_servers), self._folder)
        remote = self._hub.list_tools(config.mcp)
        chosen = [t for t in remote if child is None or t.name == child]
        if child is not None and not chosen:
            # A server's tools are known only once it runs, so a misspelt one is found here.
            names = [t.name for t in remote]
            offers = ", ".join(names[:20]) + (" and more" if len(names) > 20 else "")
            raise ToolFailure(
                f"MCP server {config.mcp!r} has no tool {child!r}{did_you_mean(child, names)}"
                f"; it offers {offers or 'no tools'}"
            )
        tools: list[Tool] = []
        for item in chosen:
            name = f"{entry}#{item.name}"
            if name not in self._built:
                wire = self._unique_wire(name)
                self._built[name] = McpServerTool(wire, item, config.mcp, self._hub, config)
            tools.append(self._built[name])
        return tools

    def _unique_wire(self, name: str) -> str:
        taken = {tool.spec.name for tool in self._built.values()}
        wire, n = wire_name(name), 2
        while wire in taken:
            wire, n = f"{wire_name(name)[:60]}_{n}", n + 1
        return wire
