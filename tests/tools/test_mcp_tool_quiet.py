"""The MCP SDK's own log lines and tracebacks never reach roost's stderr."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from roost.errors import ToolFailure
from roost.tools import toolbox_for

from .conftest import make_flow

if TYPE_CHECKING:
    from pathlib import Path

SECRET = "sk-mcp-secret-7777"

BANNER_SERVER = '''\
"""An MCP server that greets whoever starts it on stdout before speaking JSON-RPC."""

print("Welcome to the banner server, version 1.0", flush=True)

from mcp.server.mcpserver import MCPServer

server = MCPServer("banner")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


server.run()
'''

BANNER_FLOW = """\
roost: 1
name: banner
mcp_servers:
  srv: {command: PYTHON, args: [banner_server.py]}
providers:
  p:
    kind: scripted
    replies:
      - tool_calls: [{name: srv__add, arguments: {a: 2, b: 3}}]
      - TERMINATE
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p, functions: ["srv#add"]}
start: {from: USER, to: bot, content: add them}
"""

ECHO_FLOW = """\
roost: 1
name: echo
mcp_servers:
  srv: {command: sh, args: ["-c", "echo token=$TOKEN; exit 1"], env: {TOKEN: "${MYTOKEN}"}}
providers:
  p: {kind: scripted, replies: [hi, TERMINATE]}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p, functions: ["srv#add"]}
start: {from: USER, to: bot, content: hi}
"""


def _run(folder: Path, flow: str) -> subprocess.CompletedProcess[str]:
    (folder / "flow.yaml").write_text(flow.replace("PYTHON", sys.executable))
    env = {key: value for key, value in os.environ.items() if key != "ROOST_DB"}
    env["MYTOKEN"] = SECRET
    return subprocess.run(
        [sys.executable, "-c", "from roost.cli import main; main()", "run", "flow.yaml",
         "--no-input", "--events", "run.jsonl", "--db", "runs.db"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )  # fmt: skip


def test_a_server_that_prints_a_banner_works_without_noise(tmp_path: Path) -> None:
    (tmp_path / "banner_server.py").write_text(BANNER_SERVER)
    result = _run(tmp_path, BANNER_FLOW)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert '"content":"5"' in (tmp_path / "run.jsonl").read_text()


def test_a_server_echoing_a_secret_fails_in_one_masked_line(tmp_path: Path) -> None:
    result = _run(tmp_path, ECHO_FLOW)
    assert result.returncode != 0
    assert SECRET not in result.stderr + result.stdout
    assert SECRET not in (tmp_path / "run.jsonl").read_text()
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0] == "roost: error at bot: MCP server 'srv' (sh) failed to start: " + (
        "MCPError: Connection closed"
    )
    assert all(line.startswith(("roost: ", "retry with: ")) for line in lines), lines


def test_sdk_records_reach_no_handler_an_application_set_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    flow = make_flow(
        {
            "mcp_servers": {
                "srv": {
                    "command": "sh",
                    "args": ["-c", "echo token=$TOKEN; exit 1"],
                    "env": {"TOKEN": SECRET},
                }
            },
            "agents": {"a": {"functions": ["srv#add"]}},
        },
        folder=tmp_path,
    )
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure, match=r"MCP server .srv. \(sh\) failed to start"):
            toolbox("a", "")
    finally:
        toolbox.close()
    logging.getLogger("client").warning("an application's own record")
    shown = [r for r in caplog.records if r.name == "client" or r.name.startswith("mcp")]
    assert [r.getMessage() for r in shown] == ["an application's own record"]
    assert SECRET not in caplog.text
