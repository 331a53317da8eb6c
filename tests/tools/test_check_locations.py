"""Load-time tool problems point at the line and column of the key that is wrong."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from roost.errors import FlowError, Problem
from roost.flow import read_flow
from roost.tools import check_flow_tools

from .conftest import DATA

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: located
mcp_servers:
  nope: {command: roost-no-such-server-xyz}
tools:
  ok: {python: "tools_mod:add"}
  lookup: {python: "nomod:f"}
  grp:
    tools:
      sub: {flow: missing.yaml}
      opaque:
        python: "tools_mod:takes_opaque"
agents:
  a: {interrupt: ALWAYS, functions: [ok, lookup, grp#sub]}
"""


def problems_of(path: Path) -> list[Problem]:
    """The tool problems, whether or not loading already reports them."""
    try:
        flow = read_flow(path)
    except FlowError as exc:
        return [p for p in exc.problems if "tool" in p.message or "MCP" in p.message]
    return check_flow_tools(flow)


def test_problems_are_located_at_the_wrong_key(tmp_path: Path) -> None:
    shutil.copy(DATA / "tools_mod.py", tmp_path)
    shutil.copy(DATA / "sibling_helper.py", tmp_path)
    path = tmp_path / "located.yaml"
    path.write_text(FLOW)
    found = [(p.line, p.col, p.message.split(":")[0]) for p in problems_of(path)]
    assert found == [
        (4, 10, "MCP server 'nope'"),  # the `command` key
        (7, 12, "tool 'lookup'"),  # the `python` key
        (10, 13, "tool 'grp#sub'"),  # the `flow` key
        (12, 9, "tool 'grp#opaque'"),
    ]
    assert all(p.file == str(path) for p in problems_of(path))


def test_declared_parameters_that_are_not_json_schema_point_at_parameters(tmp_path: Path) -> None:
    shutil.copy(DATA / "tools_mod.py", tmp_path)
    shutil.copy(DATA / "sibling_helper.py", tmp_path)
    path = tmp_path / "schema.yaml"
    path.write_text(
        "roost: 1\n"
        "name: schema\n"
        "tools:\n"
        "  add:\n"
        '    python: "tools_mod:add"\n'
        "    parameters: {type: object, required: a}\n"
        "agents:\n"
        "  a: {interrupt: ALWAYS, functions: [add]}\n"
    )
    (problem,) = problems_of(path)
    assert (problem.line, problem.col) == (6, 5)
    assert problem.message == (
        "tool 'add': parameters is not a valid JSON Schema: required: 'a' is not of type 'array'"
    )
