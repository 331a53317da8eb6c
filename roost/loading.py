"""Loading a flow completely: the language checks, then the tools and skills it names.

``roost.flow`` checks the flow language alone and imports no edge. A flow that
is valid as language may still name a Python function that does not import,
an MCP server command that does not exist, or a skill that no folder holds (or
whose ``SKILL.md`` is broken); those are found here, at load time, so that no
run fails halfway through for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import FlowError, Problem
from roost.flow import Checked, Flow, check_flow_file
from roost.flow.loader import sorted_problems
from roost.flow.models import lists_file_tools
from roost.flow.route_checks import python_conditions
from roost.flow.skills import skill_problems

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping


def load_flow(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> Flow:
    """Reads and validates the flow at ``path``, its tools included; raises ``FlowError``."""
    return with_tools(check_flow_file(path, environ=environ))


def with_tools(checked: Checked) -> Flow:
    """The flow the language checks gave, once its tools are checked; raises ``FlowError``.

    The tools of the parts that validated are checked even when other parts did
    not, so that one error never hides another.
    """
    flow, problems = checked.flow, checked.problems
    if flow is not None:
        skills = skill_problems(flow)
        # A broken SKILL.md is told after the flow's own lines, in the order it was found.
        own = [problem for problem in skills if problem.file == flow.path]
        others = [problem for problem in skills if problem.file != flow.path]
        problems = [*sorted_problems([*problems, *tool_problems(flow), *own]), *others]
    if flow is None or any(problem.severity == "error" for problem in problems):
        raise FlowError(problems)
    return flow


def tool_problems(flow: Flow) -> list[Problem]:
    """The problems of ``flow``'s tools, MCP servers, hooks, python route conditions and
    built-in file tools' root."""
    has_none = not flow.tools and not flow.mcp_servers and not flow.hook_entries()
    if has_none and not lists_file_tools(flow) and next(python_conditions(flow), None) is None:
        return []
    from roost.tools import check_flow_tools  # imported only when a flow has tools

    return check_flow_tools(flow)
