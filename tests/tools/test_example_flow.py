"""The example flow in flows/tools runs offline: a Python tool, a sub-flow and an MCP server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from roost.engine import Runner
from roost.events import ToolCallEvent, ToolResultEvent
from roost.flow import read_flow
from roost.ports import EventLog, MemoryLog
from roost.tools import check_flow_tools

EXAMPLE = Path(__file__).parents[2] / "flows" / "tools" / "tools.yaml"


def test_example_flow_checks_clean() -> None:
    assert check_flow_tools(read_flow(EXAMPLE)) == []


async def test_example_flow_runs_offline() -> None:
    flow = read_flow(EXAMPLE)
    log = MemoryLog("demo")
    children: dict[str, EventLog] = {}

    def child_log(run_id: str) -> EventLog:
        children[run_id] = MemoryLog(run_id)
        return children[run_id]

    state = await Runner(flow=flow, log=log, child_log=child_log).start()
    assert state.status == "terminated"
    events = log.load()
    calls = [e.name for e in events if isinstance(e, ToolCallEvent)]
    assert calls == ["math__add", "units__convert", "summarize"]
    found = {e.name: e for e in events if isinstance(e, ToolResultEvent)}
    assert found["math__add"].content == "215"
    assert found["units__convert"].content == "215 km = 133.6 mi"
    assert found["summarize"].content.startswith("Summary: ")
    child = children[found["summarize"].child_run or ""].load()
    assert child[0].parent == "demo"  # type: ignore[union-attr]
    assert not any(e.is_error for e in found.values())


def test_the_example_runs_from_a_virtualenv_that_is_not_on_path(tmp_path: Path) -> None:
    # On PATH, a python3 that is not roost's (as the system's would be without its
    # packages): the flow's `command: python3` must still start the interpreter running
    # roost, so `.venv/bin/roost run` works from a shell that never activated the venv.
    shutil.copytree(EXAMPLE.parent, tmp_path / "tools")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("python", "python3"):
        other = bin_dir / name
        other.write_text("#!/bin/sh\necho 'not the python running roost' >&2\nexit 7\n")
        other.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "ROOST_DB": str(tmp_path / "db")}
    code = "import sys; from roost.cli import main; main(sys.argv[1:])"
    ran = subprocess.run(
        [sys.executable, "-c", code, "run", str(tmp_path / "tools" / "tools.yaml")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "215 km = 133.6 mi" in ran.stdout, ran.stdout
    assert "not the python running roost" not in ran.stdout + ran.stderr
