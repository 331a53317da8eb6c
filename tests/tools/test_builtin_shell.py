"""builtin#shell: approval first by default, in the flow's folder, killed on time, bounded."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

import pytest

from roost.engine import Runner
from roost.engine.recorded import RecordedTools, Stops
from roost.engine.replay import replay_run
from roost.events import InterruptEvent, LlmCallEvent, ToolResultEvent
from roost.flow import read_flow
from roost.ports import MemoryLog
from roost.tools import toolbox_for

from .conftest import make_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.tools.base import Tool


def shell(folder: Path, **settings: Any) -> Tool:
    flow = make_flow(
        {"builtins": {"shell": settings}, "agents": {"a": {"functions": ["builtin#shell"]}}},
        folder,
    )
    (tool,) = toolbox_for(flow)("a")
    return tool


def real_path(path: Path) -> str:
    return os.path.realpath(path)


async def run_command(tool: Tool, command: str) -> tuple[str, bool]:
    outcome = await tool.call({"command": command})
    return outcome.content, outcome.is_error


async def test_a_command_runs_in_the_flow_folder_and_reports_its_status(tmp_path: Path) -> None:
    tool, folder = shell(tmp_path), real_path(tmp_path)
    assert await run_command(tool, "pwd") == (f"{folder}\n[exit status 0]", False)
    assert await run_command(tool, "echo oops >&2; exit 3") == ("oops\n[exit status 3]", True)


async def test_output_is_kept_up_to_its_limit(tmp_path: Path) -> None:
    tool = shell(tmp_path, max_output=100)
    text, failed = await run_command(tool, "head -c 1000000 /dev/zero | tr '\\0' a")
    assert not failed
    assert text == "a" * 100 + "\n[output cut: the first 100 of 1000000 bytes are shown]\n" + (
        "[exit status 0]"
    )


async def test_a_command_over_its_time_is_killed_with_what_it_started(tmp_path: Path) -> None:
    tool = shell(tmp_path, timeout=2)
    # The command starts a child that would outlive it; the child's pid is written first.
    text, failed = await run_command(tool, "sleep 60 & echo $! > child.pid; echo started; wait")
    assert failed and text == "started\n[killed: the command ran longer than 2 s]"
    assert await _dies(int((tmp_path / "child.pid").read_text()))


async def test_a_cancelled_call_kills_its_command(tmp_path: Path) -> None:
    tool = shell(tmp_path, timeout=60)
    pid_file = tmp_path / "child.pid"
    call = asyncio.create_task(tool.call({"command": f"sleep 60 & echo $! > {pid_file}; wait"}))
    # Another process writes the file: there is no event to wait on, so look now and then.
    while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    call.cancel()  # as the engine does when a run is stopped
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await _dies(int(pid_file.read_text()))


async def _dies(pid: int) -> bool:
    """True once ``pid`` is gone (or a zombie); SIGKILL takes effect when the kernel runs it.

    Waits without blocking the loop, which may still have to finish starting the command.
    """
    for _ in range(1000):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child not yet reaped by its (dead) parent is a zombie: gone all the same.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ")[1][0] != "Z"


async def test_the_environment_holds_no_variable_the_flow_did_not_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOST_TEST_API_KEY", "sk-do-not-leak")
    tool = shell(tmp_path, env={"GREETING": "hello"})
    text, failed = await run_command(tool, 'echo "[$ROOST_TEST_API_KEY] [$GREETING]"')
    assert (text, failed) == ("[] [hello]\n[exit status 0]", False)


async def test_the_flows_env_wins_over_what_is_passed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C")
    tool = shell(tmp_path, env={"LANG": "C.UTF-8", "HOME": str(tmp_path)})
    text, _ = await run_command(tool, 'echo "$LANG $HOME"')
    assert text == f"C.UTF-8 {tmp_path}\n[exit status 0]"


def test_approval_is_asked_unless_the_flow_says_never(tmp_path: Path) -> None:
    assert shell(tmp_path).approval is True
    assert "A person approves each command first." in shell(tmp_path).spec.description
    assert shell(tmp_path, approval="never").approval is False


FLOW = """
roost: 1
name: sh
builtins:
  shell: {SHELL}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls: [{name: builtin__shell, arguments: {command: "echo ran > ran.txt; echo done"}}]
      - All done.
agents:
  user: {interrupt: ALWAYS}
  ops: {provider: script, functions: [builtin#shell]}
start: {from: user, to: ops, content: Please run it.}
"""


def shell_flow(folder: Path, settings: str = "{}") -> Path:
    path = folder / "sh.yaml"
    path.write_text(FLOW.replace("{SHELL}", settings))
    return path


async def test_a_run_pauses_for_approval_and_runs_the_command_after_yes(tmp_path: Path) -> None:
    flow = read_flow(shell_flow(tmp_path))
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "paused"
    pending = state.pending
    assert isinstance(pending, InterruptEvent) and pending.reason == "tool_approval"
    assert not (tmp_path / "ran.txt").exists()
    await Runner(flow=flow, log=log).continue_("yes")
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
    (result,) = [e for e in log.load() if isinstance(e, ToolResultEvent)]
    assert (result.content, result.is_error) == ("done\n[exit status 0]", False)
    # The recorded result answers the replay: nothing runs again, the requests are the same.
    (tmp_path / "ran.txt").unlink()
    assert (await replay_run(None, log.load())).identical
    assert not (tmp_path / "ran.txt").exists()


async def test_a_refused_command_never_runs(tmp_path: Path) -> None:
    flow = read_flow(shell_flow(tmp_path))
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    await Runner(flow=flow, log=log).continue_("no, not on a Friday")
    assert not (tmp_path / "ran.txt").exists()
    (result,) = [e for e in log.load() if isinstance(e, ToolResultEvent)]
    assert result.is_error and "not on a Friday" in result.content


async def test_approval_never_runs_the_command_at_once(tmp_path: Path) -> None:
    flow = read_flow(shell_flow(tmp_path, "{approval: never, timeout: 5}"))
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    assert (tmp_path / "ran.txt").exists()
    interrupts = [e for e in log.load() if isinstance(e, InterruptEvent)]
    assert [e.reason for e in interrupts] == ["human"]  # the user's turn after the reply
    call = next(e for e in log.load() if isinstance(e, LlmCallEvent))
    assert call.tools == ("builtin__shell",)
    assert (await replay_run(None, log.load())).identical


def test_a_replay_offers_the_built_in_tools_exactly_as_a_run_does(tmp_path: Path) -> None:
    settings = {
        "files": {"max_bytes": 10, "max_entries": 3},
        "http": {"hosts": ["example.com"], "timeout": 2},
        "shell": {"timeout": 1, "max_output": 5},
    }
    names = ["read_file", "write_file", "list_files", "http_get", "shell"]
    flow = make_flow(
        {"builtins": settings, "agents": {"a": {"functions": [f"builtin#{n}" for n in names]}}},
        tmp_path,
    )
    live = toolbox_for(flow)("a")
    tools = RecordedTools([], Stops([]))
    tools.bind(Runner(flow=flow, log=MemoryLog("r")))
    recorded = tools("a", "")
    assert [t.spec for t in recorded] == [t.spec for t in live]
    assert [(t.approval, t.timeout) for t in recorded] == [(t.approval, t.timeout) for t in live]
    assert [t.approval for t in live] == [False, False, False, False, True]


async def test_a_secret_handed_to_a_command_is_masked_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOST_TEST_TOKEN", "tok-4815162342")
    settings = '{approval: never, env: {TOKEN: "${ROOST_TEST_TOKEN}"}}'
    flow_file = shell_flow(tmp_path, settings)
    text = flow_file.read_text().replace("echo ran > ran.txt; echo done", "echo $TOKEN")
    flow_file.write_text(text)
    log = MemoryLog("r")
    await Runner(flow=read_flow(flow_file), log=log).start()
    (result,) = [e for e in log.load() if isinstance(e, ToolResultEvent)]
    assert result.content == "***\n[exit status 0]"
    assert "tok-4815162342" not in "".join(e.model_dump_json() for e in log.load())
