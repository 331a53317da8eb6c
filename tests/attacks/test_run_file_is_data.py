"""A run file is data, never code: reading a run starts, imports and connects to nothing.

The run file below was written by someone else. Its flow names a stdio MCP
server whose command leaves a mark on disk, a Python tool module that leaves
a mark when imported, and an HTTP MCP server on a socket this test listens
on. Every command that reads a run (show, export, import, runs, render and
the run page, replay, fork and the others with ``--flow`` of one's own)
must leave no mark and open no connection. ``replay --live-tools``, which
asks for the real tools, is the control: it does leave the marks.
"""

from __future__ import annotations

import asyncio
import io
import json
import socket
from typing import TYPE_CHECKING, Any

import pytest

from roost.cli import main
from roost.engine import Runner
from roost.engine.sources import Sources
from roost.flow import load_flow_text
from roost.messages import ToolSpec
from roost.store.jsonl import JsonlLog
from roost.tools.base import ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TRAP = """\
roost: 1
name: trap
defaults: {{provider: mock, max_rounds: 2}}
providers:
  mock:
    kind: scripted
    replies:
      - {{tool_calls: [{{name: grab}}, {{name: evil__probe}}, {{name: web__probe}}]}}
      - done
      - thanks
mcp_servers:
  evil: {{command: sh, args: ["-c", "touch '{marks}/mcp-started'"]}}
  web: {{url: "http://127.0.0.1:{port}/mcp"}}
tools:
  grab: {{python: "trap_tools:grab"}}
agents:
  user: {{role: You ask.}}
  helper: {{role: You help., functions: [grab, "evil#probe", "web#probe"]}}
start: {{from: user, to: helper, content: go}}
"""
MODULE = """\
from pathlib import Path
Path({mark!r}).write_text("imported")

def grab() -> str:
    return "grabbed"
"""
SAFE = """\
roost: 1
name: safe
defaults: {provider: mock, max_rounds: 3}
providers:
  mock: {kind: scripted, replies: [fine, fine, fine, fine]}
agents:
  user: {role: You ask.}
  helper: {role: You help.}
start: {from: user, to: helper, content: go}
"""


class Stand_in:
    def __init__(self, name: str) -> None:
        self.spec = ToolSpec(name=name)
        self.direct_output = False
        self.approval = False
        self.timeout = 5.0

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(f"{self.spec.name} answered")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A socket the flow's HTTP MCP server points at; nothing may connect to it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


@pytest.fixture
def trap(tmp_path: Path, listener: socket.socket, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run file whose flow would leave marks in ``marks/`` if anything it names ran."""
    marks = tmp_path / "marks"
    marks.mkdir()
    home = tmp_path / "trap"
    home.mkdir()
    (home / "trap_tools.py").write_text(MODULE.format(mark=str(marks / "module-imported")))
    text = TRAP.format(marks=marks, port=listener.getsockname()[1])
    (home / "flow.yaml").write_text(text)
    flow = load_flow_text(text, str(home / "flow.yaml"))
    stand_ins = {name: Stand_in(name) for name in ("grab", "evil__probe", "web__probe")}
    log = JsonlLog(tmp_path / "run.jsonl", "trap-run")
    runner = Runner(
        flow=flow, log=log, sources=Sources(tools=lambda agent, text: list(stand_ins.values()))
    )
    asyncio.run(runner.start())
    assert any(e.type == "tool_result" for e in log.load())
    (tmp_path / "safe.yaml").write_text(SAFE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return tmp_path


def roost(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def no_mark(folder: Path, listener: socket.socket) -> None:
    assert sorted(p.name for p in (folder / "marks").iterdir()) == []
    with pytest.raises(BlockingIOError):
        listener.accept()  # no one connected


READERS = [
    ("show", "run.jsonl"),
    ("export", "run.jsonl"),
    ("replay", "run.jsonl"),
    ("replay", "run.jsonl", "--until", "3"),
    ("replay", "run.jsonl", "--flow", "trap/flow.yaml"),
    ("render", "safe.yaml", "--run", "run.jsonl", "-o", "run.html"),
    ("render", "safe.yaml", "--run", "run.jsonl", "-o", "run.dot"),
    ("render", "trap/flow.yaml", "--run", "run.jsonl", "-o", "page.html"),
    ("render", "trap/flow.yaml", "-o", "flow.svg"),
    ("fork", "run.jsonl", "--at", "0"),
    ("fork", "run.jsonl", "--at", "1", "--no-input", "--flow", "safe.yaml"),
    ("continue", "run.jsonl", "--answer", "more", "--flow", "safe.yaml"),
    ("retry", "run.jsonl", "--flow", "safe.yaml"),
    ("replay", "run.jsonl", "--flow", "safe.yaml"),
]


@pytest.mark.parametrize("command", READERS, ids=[" ".join(c) for c in READERS])
def test_reading_a_run_runs_nothing_it_names(
    trap: Path, listener: socket.socket, command: tuple[str, ...]
) -> None:
    roost(*command)
    no_mark(trap, listener)


def test_a_stored_copy_is_read_without_running_anything(
    trap: Path, listener: socket.socket, capsys: pytest.CaptureFixture[str]
) -> None:
    assert roost("import", "run.jsonl") == 0
    for command in (("runs",), ("show", "trap-run"), ("export", "trap-run")):
        assert roost(*command) == 0
    assert roost("replay", "trap-run") == 0
    assert roost("render", "safe.yaml", "--run", "trap-run", "-o", "stored.html") == 0
    assert "identical" in capsys.readouterr().out
    no_mark(trap, listener)


def test_replay_rebuilds_the_requests_from_the_declarations(
    trap: Path, listener: socket.socket, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing ran, yet every request (tools offered included) is the recorded one.
    assert roost("replay", "run.jsonl") == 0
    assert capsys.readouterr().out.startswith("identical")
    events = [json.loads(line) for line in (trap / "run.jsonl").read_text().splitlines()]
    offered = [e["tools"] for e in events if e["type"] == "llm_call"]
    assert offered[0] == ["grab", "evil__probe", "web__probe"]
    no_mark(trap, listener)


def test_live_tools_is_asked_for_and_does_run_them(trap: Path, listener: socket.socket) -> None:
    # The control: the marks are real, and only --live-tools leaves them.
    roost("replay", "run.jsonl", "--live-tools")
    marks = sorted(p.name for p in (trap / "marks").iterdir())
    assert marks == ["mcp-started", "module-imported"]
