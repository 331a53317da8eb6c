"""roost.tools: the tools agents call (Python functions, sub-flows, MCP servers).

``toolbox_for(flow)`` gives the engine its ``tools(agent, latest_user_text)``
callable; ``check_flow_tools(flow)`` finds broken tools before a run starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.tools.base import Tool, ToolOutcome
from roost.tools.check import check_flow_tools
from roost.tools.names import parse_ref, wire_name
from roost.tools.subflow import SubflowRunner, current_tool_call
from roost.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from roost.flow.models import Flow
    from roost.ports import MemoryBank


def toolbox_for(
    flow: Flow,
    *,
    runner: SubflowRunner | None = None,
    memory: MemoryBank | None = None,
    run: str = "",
) -> Toolbox:
    """The tools of ``flow``'s agents, as ``toolbox(agent, latest_user_text) -> [Tool]``.

    ``runner`` runs ``flow:`` tools as child runs: the engine's ``ChildRuns``,
    which the engine's ``Runner`` hands its own toolbox (its sub-flows then
    become child runs on its ``child_log``, linked to its log). Without one, a
    sub-flow tool is listed but its calls are error results. Call
    ``close()``/``aclose()`` when the run is over to stop any MCP server the
    toolbox started (they are stopped at exit otherwise). ``memory`` keeps what
    the ``memory#...`` tools store (written as coming from the run ``run``).
    """
    return Toolbox(flow, runner=runner, memory=memory, run=run)


__all__ = [
    "SubflowRunner",
    "Tool",
    "ToolOutcome",
    "Toolbox",
    "check_flow_tools",
    "current_tool_call",
    "parse_ref",
    "toolbox_for",
    "wire_name",
]
