"""The README's example flow and quick-start command stay true."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import roost
from roost.engine import Runner
from roost.eventlog import MemoryLog

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_flow_validates_and_runs_to_its_end(tmp_path: Path) -> None:
    block = re.search(r"```yaml\n(.*?)```", README, re.S)
    assert block is not None
    path = tmp_path / "readme.yaml"
    path.write_text(block.group(1))
    flow = roost.load_flow(path)
    state = asyncio.run(Runner(flow, MemoryLog("readme")).start())
    assert state.status == "terminated"
    assert [entry.content for entry in state.history][-1] == "TERMINATE"


def test_the_quick_start_flow_exists_and_needs_no_input() -> None:
    command = re.search(r"pip install \. && roost run (\S+)", README)
    assert command is not None
    flow = roost.load_flow(ROOT / command.group(1))
    state = asyncio.run(Runner(flow, MemoryLog("quick")).start())
    assert state.status == "terminated"
