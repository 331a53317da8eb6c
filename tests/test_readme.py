"""The README's example flow and quick-start command stay true."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import roost
from roost.engine import Runner
from roost.ports import MemoryLog

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_flow_validates_and_runs_to_its_end(tmp_path: Path) -> None:
    block = re.search(r"```yaml\n(.*?)```", README, re.S)
    assert block is not None
    path = tmp_path / "readme.yaml"
    path.write_text(block.group(1))
    flow = roost.load_flow(path)
    state = asyncio.run(Runner(flow=flow, log=MemoryLog("readme")).start())
    assert state.status == "terminated"
    assert [entry.content for entry in state.history][-1] == "TERMINATE"


def test_the_quick_start_flow_exists_and_needs_no_input() -> None:
    command = re.search(r"pip install \. && roost run (\S+)", README)
    assert command is not None
    flow = roost.load_flow(ROOT / command.group(1))
    state = asyncio.run(Runner(flow=flow, log=MemoryLog("quick")).start())
    assert state.status == "terminated"


def _table_commands() -> set[str]:
    """The commands the README's command table names (``roost run`` -> ``run``)."""
    table = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`roost (\w+)", table))


def test_the_command_table_names_every_command_of_the_command_line() -> None:
    from roost.cli.app import COMMANDS

    assert _table_commands() == set(COMMANDS)


def test_the_readme_counts_the_tests_as_they_are_within_a_tenth() -> None:
    said = re.search(r"The suite \(about ([\d,]+) tests\)", README)
    assert said is not None
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n0", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    collected = re.search(r"^(\d+) tests collected", done.stdout, re.M)
    assert collected is not None, done.stdout[-2000:] + done.stderr[-2000:]
    count = int(collected.group(1))
    assert abs(int(said.group(1).replace(",", "")) - count) <= count / 10, count
