"""approval: plan through the command line: a model answer's tool calls are shown together
and a person approves or refuses them as one, with --answer or at the prompt."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from tests.cli_inprocess import Ran, run_cli

if TYPE_CHECKING:
    from pathlib import Path

TOOLS_PY = """\
def run(cmd: str) -> str:
    with open("ran.txt", "a") as ran:
        ran.write(cmd + "\\n")
    return f"ran {cmd}"
"""

# Counts its calls in a file; refuses rm, adds a flag to everything else.
HOOK_PY = """\
import json, sys
call = json.load(sys.stdin)
with open("hook_calls.txt", "a") as seen:
    seen.write(call["id"] + "\\n")
cmd = call["arguments"]["cmd"]
if cmd.startswith("rm"):
    print(json.dumps({"decision": "refuse", "reason": "no rm"}))
else:
    print(json.dumps({"decision": "change", "arguments": {"cmd": cmd + " -v"}}))
"""


def sh(*commands: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "sh", "arguments": {"cmd": cmd}} for cmd in commands]}


def write_flow(folder: Path, replies: list[Any], hooks: dict[str, Any] | None = None) -> Path:
    (folder / "tools.py").write_text(TOOLS_PY)
    (folder / "hook.py").write_text(HOOK_PY)
    flow = {
        "roost": 1,
        "name": "planned",
        "defaults": {"provider": "p"},
        "providers": {"p": {"kind": "scripted", "replies": replies}},
        "tools": {"sh": {"python": "tools:run"}},
        "agents": {
            "USER": {"interrupt": "ALWAYS"},
            "a": {"functions": ["sh"], "approval": "plan"},
        },
        "start": {"from": "USER", "to": "a", "content": "tidy up"},
        **({"hooks": hooks} if hooks else {}),
    }
    path = folder / "flow.yaml"
    path.write_text(json.dumps(flow))
    return path


def roost(*args: str, cwd: Path, input: str | None = None) -> Ran:
    done = run_cli(*args, cwd=cwd, input=input)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


def events(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]


def of_type(folder: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(folder) if e["type"] == kind]


def ran(folder: Path) -> list[str]:
    path = folder / "ran.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_plan_waits_for_one_answer_and_yes_runs_every_call(tmp_path: Path) -> None:
    flow = write_flow(tmp_path, [sh("ls", "pwd"), sh("date"), "tidy"])
    done = roost("run", str(flow), "--no-input", "--events", "run.jsonl", cwd=tmp_path)
    assert 'a asks to run 1. sh({"cmd": "ls"}) 2. sh({"cmd": "pwd"})' in done.stdout
    assert ran(tmp_path) == []
    (asked,) = of_type(tmp_path, "interrupt")
    assert asked["reason"] == "tool_plan"
    assert [c["arguments"] for c in asked["tool_calls"]] == [{"cmd": "ls"}, {"cmd": "pwd"}]
    # One yes runs the whole plan; the next answer's plan is asked about again.
    roost("continue", "run.jsonl", "--answer", "yes", "--answer", "yes", cwd=tmp_path)
    first, second = ran(tmp_path)[:2], ran(tmp_path)[2:]
    assert (sorted(first), second) == (["ls", "pwd"], ["date"])  # a plan's calls run together
    assert [r["content"] for r in of_type(tmp_path, "tool_result")] == [
        "ran ls",
        "ran pwd",
        "ran date",
    ]
    assert len(of_type(tmp_path, "interrupt")) == 3  # two plans, then USER's turn
    assert "identical" in roost("replay", "run.jsonl", cwd=tmp_path).stdout


def test_anything_but_yes_refuses_the_whole_plan_with_the_reason(tmp_path: Path) -> None:
    flow = write_flow(tmp_path, [sh("ls", "pwd"), "fine"])
    roost("run", str(flow), "--answer", "not today", "--events", "run.jsonl", cwd=tmp_path)
    assert ran(tmp_path) == []
    refusal = "The person did not approve this plan: not today"
    assert [(r["content"], r["is_error"]) for r in of_type(tmp_path, "tool_result")] == [
        (refusal, True),
        (refusal, True),
    ]


def test_the_plan_shows_the_calls_as_hooks_left_them_and_asks_no_hook_twice(
    tmp_path: Path,
) -> None:
    hooks = {"before_tool": [{"command": sys.executable, "args": ["hook.py"]}]}
    flow = write_flow(tmp_path, [sh("ls", "rm -rf /"), "fine"], hooks)
    done = roost("run", str(flow), "--no-input", "--events", "run.jsonl", cwd=tmp_path)
    # The refused call is not put to the person; the changed one is shown changed.
    assert 'a asks to run 1. sh({"cmd": "ls -v"}): answer yes' in done.stdout
    hook = f"hook {sys.executable} hook.py"
    assert f"{hook} changed the arguments of sh's call" in done.stdout
    assert f"{hook} refused sh's call: no rm" in done.stdout
    roost("continue", "run.jsonl", "--answer", "yes", cwd=tmp_path)
    assert ran(tmp_path) == ["ls -v"]
    assert (tmp_path / "hook_calls.txt").read_text().splitlines() == ["call_0_0", "call_0_1"]
    assert [(r["content"], r["is_error"]) for r in of_type(tmp_path, "tool_result")] == [
        ("ran ls -v", False),
        ("no rm", True),
    ]
