"""Sub-flows remember: a child run keeps and recalls entries in its parent's memory bank."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.sources import Sources
from roost.events import MemoryEntry, MemoryEvent, ToolResultEvent
from roost.ports import EventLog, MemoryLog
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.cli_inprocess import run_cli
from tests.engine.conftest import make_flow
from tests.fakes.flows import ASK_SUBFLOW as ASK
from tests.fakes.flows import MEMORY_PARENT as PARENT
from tests.fakes.flows import NOTE_SUBFLOW

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event


class Children:
    """A child_log factory keeping the logs it made."""

    def __init__(self) -> None:
        self.made: dict[str, MemoryLog] = {}

    def __call__(self, run_id: str) -> EventLog:
        self.made[run_id] = MemoryLog(run_id)
        return self.made[run_id]


async def run_parent(
    folder: Path, tool: str, message: str, memory: SqlMemory, children: Children
) -> list[Event]:
    text = PARENT.replace("TOOL", tool).replace("MESSAGE", message)
    flow = make_flow(text, folder / "front-desk.yaml")
    log = MemoryLog(f"parent-{tool}")
    await Runner(flow=flow, log=log, child_log=children, sources=Sources(memory=memory)).start()
    return log.load()


async def test_a_subflow_remembers_across_runs_in_its_parents_bank(tmp_path: Path) -> None:
    (tmp_path / "note.yaml").write_text(NOTE_SUBFLOW)
    (tmp_path / "ask.yaml").write_text(ASK)
    memory = SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))
    children = Children()

    told = await run_parent(tmp_path, "note", "I like green tea.", memory, children)
    [noted] = [e for e in told if isinstance(e, ToolResultEvent)]
    assert not noted.is_error and noted.content == "Noted."
    tea = MemoryEntry(key="tea", content="The guest drinks green tea.", importance=0.9)
    assert memory.entries("shared:guests") == [tea]
    # The store is an event of the child run, not of the parent.
    child = children.made[noted.child_run or ""].load()
    assert [(e.operation, e.entry) for e in child if isinstance(e, MemoryEvent)] == [("store", tea)]
    assert not any(isinstance(e, MemoryEvent) for e in told)

    asked = await run_parent(tmp_path, "ask", "Which tea?", memory, children)
    [answer] = [e for e in asked if isinstance(e, ToolResultEvent)]
    assert answer.content.startswith("Which tea?")
    assert "- tea: The guest drinks green tea." in answer.content
    recalled = [
        e for e in children.made[answer.child_run or ""].load() if isinstance(e, MemoryEvent)
    ]
    assert [(e.operation, e.entries) for e in recalled] == [("recall", (tea,))]


def test_a_subflow_run_by_the_command_line_remembers(tmp_path: Path) -> None:
    (tmp_path / "note.yaml").write_text(NOTE_SUBFLOW)
    (tmp_path / "ask.yaml").write_text(ASK)
    env = {**os.environ, "ROOST_DB": str(tmp_path / "runs.db")}
    for tool, message in (("note", "I like green tea."), ("ask", "Which tea?")):
        desk = PARENT.replace("TOOL", tool).replace("MESSAGE", message)
        (tmp_path / "desk.yaml").write_text(desk)
        ran = run_cli("run", "desk.yaml", "--no-input", cwd=tmp_path, env=env)
        assert ran.returncode == 0, ran.stderr
    assert "- tea: The guest drinks green tea." in ran.stdout
