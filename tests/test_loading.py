"""roost.load_flow and roost validate check a flow's tools as well as its language."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import roost
from roost.cli import main

if TYPE_CHECKING:
    from pathlib import Path

BROKEN_TOOLS = """\
roost: 1
name: bad-tools
defaults: {provider: m}
providers:
  m: {kind: scripted, replies: [hi]}
tools:
  nope: {python: "no_such_module_xyz:f"}
mcp_servers:
  srv: {command: no-such-command-xyz}
agents:
  a: {functions: [nope]}
  b: {}
start: {from: b, to: a, content: hi}
"""


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(BROKEN_TOOLS)
    return path


def test_load_flow_raises_for_a_tool_that_does_not_import(broken: Path) -> None:
    with pytest.raises(roost.FlowError) as caught:
        roost.load_flow(broken)
    lines = [str(problem) for problem in caught.value.errors]
    assert lines == [
        f"{broken}:7:10: error: tool 'nope': cannot import 'no_such_module_xyz': "
        "No module named 'no_such_module_xyz'",
        f"{broken}:9:9: error: MCP server 'srv': command 'no-such-command-xyz' not found",
    ]


def test_validate_reports_tool_problems_and_exits_2(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(broken)])
    assert exited.value.code == 2
    out = capsys.readouterr().out
    assert f"{broken}:7:10: error: tool 'nope'" in out
    assert f"{broken}:9:9: error: MCP server 'srv'" in out


def test_a_flow_with_working_tools_loads(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    path = tmp_path / "ok.yaml"
    path.write_text(
        BROKEN_TOOLS.replace("no_such_module_xyz:f", "mytools:add").replace(
            "mcp_servers:\n  srv: {command: no-such-command-xyz}\n", ""
        )
    )
    flow = roost.load_flow(path)
    assert "nope" in flow.tools


def test_chat_refuses_a_flow_whose_tools_cannot_work_before_it_asks_anything(
    broken: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["chat", str(broken), "--db", str(broken.parent / "runs.db")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"{broken}:7:10: error: tool 'nope': cannot import 'no_such_module_xyz': "
        "No module named 'no_such_module_xyz'",
        f"{broken}:9:9: error: MCP server 'srv': command 'no-such-command-xyz' not found",
    ]
    assert not (broken.parent / "runs.db").exists()  # no run was stored


def test_read_flow_checks_the_language_alone(broken: Path) -> None:
    from roost.flow import read_flow

    flow = read_flow(broken)  # the tools are left to roost.load_flow
    assert sorted(flow.tools) == ["nope"]
