"""Tools that misbehave, through `roost run` and `roost validate` as a user runs them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests import cli_process
from tests.cli_inprocess import Ran, run_cli

if TYPE_CHECKING:
    from pathlib import Path

TOOLS_PY = """\
import sys

def quit() -> str:
    sys.exit(7)

def remember(word):
    return f"remembered {word}"
"""

EXITS_AT_IMPORT_PY = "import sys\nsys.exit(3)\n"

FLOW = """\
roost: 1
name: misbehaving
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - tool_calls:
          - {name: quit, arguments: {}}
          - {name: remember, arguments: {word: 5}}
      - it exited, I went on
      - TERMINATE
tools:
  quit: {python: "TOOLS:quit"}
  remember:
    python: "TOOLS:remember"
    parameters: {type: object, properties: {word: {type: string}}, required: [word]}
agents:
  USER: {role: the person}
  a: {functions: [quit, remember]}
start: {from: USER, to: a, content: go}
"""


def roost(*args: str, cwd: Path) -> Ran:
    result = run_cli(*args, cwd=cwd)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def write_flow(folder: Path, module: str, flow: str = FLOW) -> Path:
    (folder / "tools_ok.py").write_text(TOOLS_PY)
    (folder / "exits_at_import.py").write_text(EXITS_AT_IMPORT_PY)
    path = folder / "flow.yaml"
    path.write_text(flow.replace("TOOLS", module))
    return path


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_tool_that_exits_or_gets_bad_arguments_does_not_end_the_run(tmp_path: Path) -> None:
    flow = write_flow(tmp_path, "tools_ok")
    log = tmp_path / "run.jsonl"
    result = roost("run", str(flow), "--no-input", "--events", str(log), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    results = [(e["content"], e["is_error"]) for e in events(log) if e["type"] == "tool_result"]
    assert results == [
        ("quit exited (sys.exit(7))", True),
        ("invalid arguments for remember: word: 5 is not of type 'string'", True),
    ]
    assert events(log)[-1] == {**events(log)[-1], "type": "terminate", "reason": "TERMINATE"}


def test_a_module_that_exits_while_imported_is_a_located_problem(tmp_path: Path) -> None:
    flow = write_flow(tmp_path, "exits_at_import")
    failed = "importing 'exits_at_import' failed: it called sys.exit(3)"
    expected = [  # at the `python` key of each tool of that module
        f"{flow}:14:10: error: tool 'quit': {failed}",
        f"{flow}:16:5: error: tool 'remember': {failed}",
    ]
    for command in (["validate"], ["run", "--no-input"]):
        result = roost(command[0], str(flow), *command[1:], cwd=tmp_path)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert (result.stdout + result.stderr).splitlines() == expected, command


def test_parameters_that_are_not_json_schema_are_a_located_problem(tmp_path: Path) -> None:
    broken = FLOW.replace("{word: {type: string}}", "{word: {type: text}}")
    flow = write_flow(tmp_path, "tools_ok", broken)
    result = roost("validate", str(flow), cwd=tmp_path)
    assert result.returncode == 2
    assert (result.stdout + result.stderr).splitlines() == [
        f"{flow}:17:5: error: tool 'remember': parameters is not a valid JSON Schema: "
        "properties.word.type: 'text' is not valid under any of the given schemas"
    ]


HANGS_PY = '''\
import threading

def hang(x: str) -> str:
    """Never returns."""
    threading.Event().wait()
    return x

def interrupt(x: str) -> str:
    """Raises KeyboardInterrupt itself."""
    raise KeyboardInterrupt
'''

HANG_FLOW = """\
roost: 1
name: hanging
providers:
  mock:
    kind: scripted
    replies:
      - tool_calls: [{name: hang, arguments: {x: a}}, {name: interrupt, arguments: {x: b}}]
      - done
      - TERMINATE
tools:
  hang: {python: "hangs:hang", timeout: 1}
  interrupt: {python: "hangs:interrupt"}
agents:
  A: {role: a, provider: mock, functions: [hang, interrupt]}
  B: {role: b, provider: mock}
start: {from: B, to: A, content: go}
"""


def test_a_tool_still_blocked_after_its_timeout_does_not_keep_roost_running(
    tmp_path: Path,
) -> None:
    (tmp_path / "hangs.py").write_text(HANGS_PY)
    (tmp_path / "hang.yaml").write_text(HANG_FLOW)
    # A real process: what is tested is that it ends while a tool's thread is still blocked.
    # The subprocess timeout only guards the suite: before the fix roost never exited.
    args = ("run", "hang.yaml", "--no-input", "--events", "run.jsonl")
    result = cli_process.run_cli(*args, cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    results = {e["name"]: e for e in events if e["type"] == "tool_result"}
    assert results["hang"]["is_error"] and "timed out" in results["hang"]["content"]
    assert results["interrupt"] == {**results["interrupt"], "is_error": True}
    assert "KeyboardInterrupt" in results["interrupt"]["content"]
    assert events[-1]["type"] == "terminate"
