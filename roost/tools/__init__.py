"""roost.tools: the tools agents call (Python functions, sub-flows, MCP servers).

``toolbox_for(flow)`` gives the engine its ``tools(agent, latest_user_text)``
callable; ``check_flow_tools(flow)`` finds broken tools before a run starts.
"""

from __future__ import annotations

from roost.flow.models import Flow
from roost.tools.base import Tool, ToolOutcome
from roost.tools.check import check_flow_tools
from roost.tools.names import parse_ref, wire_name
from roost.tools.subflow import ParentRun, SubflowRunner, current_tool_call
from roost.tools.toolbox import Toolbox


def toolbox_for(flow: Flow, *, runner: SubflowRunner | ParentRun | None = None) -> Toolbox:
    """The tools of ``flow``'s agents, as ``toolbox(agent, latest_user_text) -> [Tool]``.

    ``runner`` runs ``flow:`` tools: a ``SubflowRunner``, or the engine's ``Runner``
    itself (its sub-flows then become child runs on its ``child_log``, linked to
    its log); without one, sub-flows run on logs kept in memory. Call
    ``close()``/``aclose()`` when the run is over to stop any MCP server the
    toolbox started (they are stopped at exit otherwise).
    """
    return Toolbox(flow, runner=runner)


__all__ = [
    "ParentRun",
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
