"""The lines ``roost run`` prints after a run: usage and cost read the log only when needed."""

from __future__ import annotations

import contextlib
import io
from typing import TYPE_CHECKING

from rich.console import Console

from roost.cli import main
from roost.cli.console import RunConsole
from roost.messages import Usage
from roost.runstate import RunState
from roost.store.sql import SqlStore
from roost.store.sqllog import SqlLog
from roost.testing import flow_from_yaml

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from roost.events import Event

FLOW = """
roost: 1
agents:
  USER: {role: A person.}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: Hi.}
"""
HELLO = """
roost: 1
defaults: {provider: mock}
providers: {mock: {kind: scripted, replies: [Hello., TERMINATE]}}
agents:
  USER: {role: A person.}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: Hi.}
"""


def _printed(state: RunState, reads: list[int]) -> str:
    out = io.StringIO()
    console = RunConsole(Console(file=out, force_terminal=False, soft_wrap=True))

    def events() -> list[object]:
        reads.append(1)
        return []

    console.usage(state, flow_from_yaml(FLOW, replies=["Hello."]), events)  # type: ignore[arg-type]
    return out.getvalue()


def test_a_stored_run_without_reported_usage_is_not_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A scripted run reports no tokens: reading its whole log again at the end (the
    # cost is worked out from its model calls) would be a second pass over every event.
    read: list[int] = []
    load = SqlLog.load

    def counted(self: SqlLog) -> list[Event]:
        events = load(self)
        read.append(len(events))
        return events

    monkeypatch.setattr(SqlLog, "load", counted)
    flow = tmp_path / "flow.yaml"
    flow.write_text(HELLO)
    with contextlib.suppress(SystemExit):
        main(["run", str(flow), "--no-input", "--db", str(tmp_path / "runs.db")])
    assert sum(read) == 0  # only the new, empty log was ever read
    assert "terminated" in SqlStore(str(tmp_path / "runs.db")).runs()[0].status


def test_a_run_with_usage_reads_its_calls_for_the_cost() -> None:
    reads: list[int] = []
    state = RunState(usage=Usage(calls=2, prompt_tokens=120, completion_tokens=40))
    printed = _printed(state, reads)
    assert "usage: 2 calls, 120 prompt tokens, 40 completion tokens, cost" in printed
    assert reads == [1]
