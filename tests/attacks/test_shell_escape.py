"""builtin#shell: nothing a command starts outlives the call, setsid and double forks too.

Before, the command ran in a process group of its own and the group was
killed when the call ended; a process that called ``setsid`` (or was double
forked into a group of its own) left the group and lived on, and one that
kept the output pipe open held the call until its timeout. Now a keeper
process runs the command as a child subreaper (Linux): every process the
command started, whatever session or group it moved to, is killed when the
command ends, times out or the call is cancelled.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING, Any

import pytest

from roost.tools import toolbox_for
from tests.tools.conftest import make_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.tools.base import Tool

# A process that leaves the command's session, writes its pid, then sleeps for a minute.
ESCAPE = "setsid sh -c 'echo $$ > {name}; exec sleep 60' > /dev/null 2>&1 &"
DOUBLE_FORK = "( setsid sh -c 'echo $$ > {name}; exec sleep 60' > /dev/null 2>&1 & )"
HOLDS_PIPE = "setsid sh -c 'echo $$ > {name}; exec sleep 60' &"
WAIT_FOR = "while [ ! -s {name} ]; do sleep 0.01; done"


def shell(folder: Path, **settings: Any) -> Tool:
    flow = make_flow(
        {
            "builtins": {"shell": {"approval": "never", **settings}},
            "agents": {"a": {"functions": ["builtin#shell"]}},
        },
        folder,
    )
    (tool,) = toolbox_for(flow)("a")
    return tool


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(") ", 1)[1][0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


async def _gone(pid: int) -> bool:
    for _ in range(300):  # three seconds at most
        if not _alive(pid):
            return True
        await asyncio.sleep(0.01)
    os.kill(pid, 9)  # leave nothing behind when the test fails
    return False


@pytest.mark.parametrize("start", [ESCAPE, DOUBLE_FORK], ids=["setsid", "double-fork"])
async def test_a_process_that_left_the_session_dies_when_the_command_ends(
    tmp_path: Path, start: str
) -> None:
    command = f"{start.format(name='child.pid')}\n{WAIT_FOR.format(name='child.pid')}; echo ok"
    outcome = await shell(tmp_path, timeout=20).call({"command": command})
    assert (outcome.content, outcome.is_error) == ("ok\n[exit status 0]", False)
    assert await _gone(int((tmp_path / "child.pid").read_text()))


async def test_a_process_that_left_the_session_dies_when_the_command_times_out(
    tmp_path: Path,
) -> None:
    command = f"{ESCAPE.format(name='child.pid')}\n{WAIT_FOR.format(name='child.pid')}; sleep 60"
    outcome = await shell(tmp_path, timeout=1).call({"command": command})
    assert outcome.is_error and "[killed: the command ran longer than 1 s]" in outcome.content
    assert await _gone(int((tmp_path / "child.pid").read_text()))


async def test_a_process_holding_the_output_does_not_hold_the_call(tmp_path: Path) -> None:
    command = f"{HOLDS_PIPE.format(name='child.pid')}\n{WAIT_FOR.format(name='child.pid')}; echo ok"
    began = time.monotonic()
    outcome = await shell(tmp_path, timeout=20).call({"command": command})
    assert outcome.content == "ok\n[exit status 0]" and time.monotonic() - began < 5
    assert await _gone(int((tmp_path / "child.pid").read_text()))


async def test_a_cancelled_call_kills_what_left_the_session(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"{ESCAPE.format(name='child.pid')}\nsleep 60"
    call = asyncio.create_task(shell(tmp_path, timeout=60).call({"command": command}))
    for _ in range(1000):  # another process writes the file: look now and then
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await _gone(int(pid_file.read_text()))


async def test_the_exit_status_is_the_commands(tmp_path: Path) -> None:
    tool = shell(tmp_path)
    assert (await tool.call({"command": "exit 7"})).content == "[exit status 7]"
    killed = await tool.call({"command": "kill -9 $$"})
    assert killed.content == "[exit status 137]" and killed.is_error
