"""A run store's memory: opened at its first use, and only for flows that may remember."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.events import MemoryEntry
from roost.store.lazy_memory import LazyMemory, may_remember
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from roost.testing import flow_from_yaml
from tests.fakes.flows import NOTE_SUBFLOW

if TYPE_CHECKING:
    from pathlib import Path

PLAIN = """
    roost: 1
    agents:
      USER: {interrupt: ALWAYS}
      helper: {}
    start: {from: USER, to: helper, content: Hi.}
"""
HELLO = ["Hello."]


def test_a_flow_may_remember_with_a_memory_section_or_a_sub_flow(tmp_path: Path) -> None:
    assert not may_remember(flow_from_yaml(PLAIN, replies=HELLO))
    assert may_remember(
        flow_from_yaml(PLAIN.replace("roost: 1", "roost: 1\n    memory: {}"), replies=HELLO)
    )
    (tmp_path / "note.yaml").write_text(NOTE_SUBFLOW)
    with_subflow = PLAIN.replace("agents:", "tools:\n      note: {flow: note.yaml}\n    agents:")
    assert may_remember(flow_from_yaml(with_subflow, replies=HELLO, path=tmp_path / "desk.yaml"))


def test_the_store_is_opened_at_the_first_use_only_and_let_go_of_when_closed(
    tmp_path: Path,
) -> None:
    opened: list[SqlStore] = []

    def open_bank() -> SqlMemory:
        opened.append(SqlStore(str(tmp_path / "runs.db")))
        return SqlMemory(opened[-1])

    memory = LazyMemory(open_bank, close=lambda: opened[-1].close())
    memory.close()  # closing what was never opened opens nothing
    assert not memory.opened and opened == []
    assert not (tmp_path / "runs.db").exists()
    memory.store("guests", MemoryEntry(key="tea", content="green"), "r1")
    assert memory.opened and len(opened) == 1
    assert [e.content for e in memory.entries("guests")] == ["green"]
    assert len(opened) == 1  # kept, not opened again
    memory.close()
    assert not memory.opened
    assert [e.key for e in memory.recall("guests", "tea", 5)] == ["tea"]  # opened afresh
    assert len(opened) == 2
    memory.close()
