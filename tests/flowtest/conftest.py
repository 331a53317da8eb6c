"""A flow with a channel, a director, a tool and a person, test files written beside it, and
``roost`` run in this process."""

from __future__ import annotations

import asyncio
import textwrap
from typing import TYPE_CHECKING

import pytest

from roost.cli import main
from roost.flowtest.cases import CaseResult, run_case
from roost.flowtest.spec import load_test_file
from tests.flowtest.support import support_folder

if TYPE_CHECKING:
    from pathlib import Path

    from roost.store.sql import SqlStore

TEAM = """\
roost: 1
name: team
vars: {persona: a careful solver}
defaults: {provider: team}
providers:
  team: {kind: openai, model: gpt-4o-mini, api_key: "${ROOST_TEST_UNSET_KEY}"}
  director: {kind: scripted, replies: [solver, checker, client]}
tools:
  add: {python: "adder:add", description: Add two integers}
agents:
  solver: {role: "You are {{ vars.persona }}.", functions: [add]}
  checker: {role: You check the solver's work.}
  client: {interrupt: ALWAYS, role: The person who asks.}
channels:
  desk:
    members: [solver, checker, client]
    role: You direct the desk.
    director: {strategy: llm, provider: director}
start: {from: client, to: desk, content: "What is 2 + 2?"}
"""

ADDER = "def add(a: int, b: int) -> int:\n    return a + b\n"

# The case every test starts from: it meets each expectation it states.
CASE = """\
name: solves it
replies:
  team:
    - {tool_calls: [{name: add, arguments: {a: 2, b: 2}}]}
    - It is 4.
    - "Checked: 4 is right."
expect:
  status: paused
  at: client
  final: {contains: 4 is right}
  tool_called: {name: add, arguments: {a: 2}}
  chosen: [solver, checker, client]
"""

FAILING = CASE.replace("name: solves it", "name: wrong").replace(
    "final: {contains: 4 is right}", "final: {contains: five}"
)


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The folder holding team.yaml and its tool module."""
    (tmp_path / "team.yaml").write_text(TEAM)
    (tmp_path / "adder.py").write_text(ADDER)
    return tmp_path


def write_tests(
    folder: Path, *cases: str, name: str = "team.test.yaml", flow: str = "team.yaml"
) -> Path:
    """A test file of ``cases`` (each a YAML mapping's text) in ``folder``."""
    items = "".join(
        "  - " + textwrap.indent(textwrap.dedent(case).strip(), "    ")[4:] + "\n" for case in cases
    )
    path = folder / name
    path.write_text(f"flow: {flow}\ncases:\n{items}")
    return path


def roost(
    *args: str, cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """``roost ARGS`` in this process, in ``cwd``: (exit status, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    try:
        main(list(args))
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture
def support(tmp_path: Path) -> Path:
    return support_folder(tmp_path)


def results(
    path: Path, store: SqlStore | None = None, repeat: int | None = None
) -> list[CaseResult]:
    loaded = load_test_file(path)
    return [
        asyncio.run(run_case(loaded, case, store=store, repeat=repeat)) for case in loaded.cases
    ]


def cases(folder: Path, *written: str) -> Path:
    return write_tests(folder, *written, name="support.test.yaml", flow="support.yaml")
