"""``roost`` run in-process in a fresh folder holding ask.yaml, as the chat session tests run it."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from roost.cli import main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


ASK = """\
roost: 1
name: ask
defaults: {provider: mock}
providers:
  mock: {kind: scripted, model: poet-1, replies: [four, five, six, seven, TERMINATE]}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: b}
start: {from: USER, to: bot, content: "2 + 2?"}
"""


LIVE = """\
roost: 1
name: live
providers:
  llm:
    kind: openai
    model: fake-chat
    base_url: ${FAKE_LLM_URL}/v1
    api_key: sk-fake-key
    timeout: 120
    max_retries: 0
defaults: {provider: llm}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: hi}
"""


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


Roost = Callable[..., Result]


def command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """Runs the command line in a fresh folder; ``stdin`` is text or a stream to read.

    Each test module that uses it makes it its ``roost`` fixture: tests/cli/conftest.py's
    ``roost`` is the store tests' command line, with another flow in its folder.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "ask.yaml").write_text(ASK)

    def invoke(*args: str, stdin: Any = "") -> Result:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin) if isinstance(stdin, str) else stdin)
        code = 0
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def run_id_in(said: str) -> str:
    """The id of the run a chat's first line names (``run ID of ...`` or ``resumed run ID``)."""
    first = said.splitlines()[0].split()
    return first[first.index("run") + 1]


def listed(roost: Roost, *options: str) -> list[str]:
    """The ids ``roost runs`` lists."""
    out = roost("runs", *options).out
    return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]
