"""Batch fixtures: a two-reply flow, inputs written as a user would, the CLI in this process,
and two flows whose rows store and recall memory."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from fakes.flows import TELL_TEA

from roost.cli import main
from roost.events import MessageEvent
from tests.store.conftest import pg_server, pg_url  # noqa: F401  (PostgreSQL for batches)

if TYPE_CHECKING:
    from pathlib import Path

    from roost.store.sql import SqlStore


# Each row: the bot echoes the row's message, then the person ends the run.
TWO = """\
roost: 1
name: two
vars: {topic: owls, tone: plain}
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{echo: last}, TERMINATE]}
agents:
  USER: {role: "A person asking about {{ vars.topic }}."}
  bot: {role: "You answer in a {{ vars.tone }} tone."}
start: {from: USER, to: bot, content: "Tell me about {{ vars.topic }}."}
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder, holding two.yaml; its store is .roost/roost.db there."""
    (tmp_path / "two.yaml").write_text(TWO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    return tmp_path


def jsonl(path: Path, *rows: dict[str, Any] | str) -> Path:
    """Writes ``rows`` (objects, or lines as they are) as JSON Lines."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


Roost = Callable[..., tuple[int, str, str]]


@pytest.fixture
def roost(capsys: pytest.CaptureFixture[str]) -> Roost:
    """``roost ARGS`` in this process: (exit status, stdout, stderr)."""

    def invoke(*args: str) -> tuple[int, str, str]:
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        return code, out, err

    return invoke


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --------------------------------------------------------------------------- memory

# Each row's host stores what the guest drinks.
TELL = TELL_TEA.replace("name: tea-house", "name: tell")  # the same host, its own name

# Its model repeats what it is sent, then the guest ends the run: the reply shows the recall.
ASK = """\
roost: 1
name: ask
memory: {scope: guests}
providers:
  script: {kind: scripted, replies: [{echo: last}, TERMINATE]}
agents:
  guest: {provider: script}
  host: {provider: script}
start: {from: guest, to: host, content: "Which tea should I make?"}
"""

RECALLED = "- tea: The guest drinks green tea."


def host_said(store: SqlStore, run: str) -> list[str]:
    """What the host of ``run`` said: its one echo shows what it was sent."""
    events = store.log(run).load()
    return [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "host"]
