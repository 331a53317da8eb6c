"""A Workspace owns one run store: its runs' sub-flow runs, memory and images are kept there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.ports import MemoryImages, MemoryLog
from roost.store.images import SqlImages
from roost.store.sql import SqlStore
from roost.testing import flow_from_yaml
from roost.workspace import Workspace
from tests.fakes.flows import NOTE_SUBFLOW

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from roost.flow import Flow


# A flow that recalls from the same memory: its model repeats what it is sent.
ASK = """
    roost: 1
    memory: {scope: guests}
    providers:
      echo: {kind: scripted, replies: [{echo: last}]}
    agents:
      USER: {interrupt: ALWAYS}
      clerk: {provider: echo}
    start: {from: USER, to: clerk, content: What does the guest drink? tea}
"""

# The parent has no memory of its own: only its sub-flow does.
PARENT = """
    roost: 1
    name: front-desk
    tools:
      note: {flow: note.yaml}
    agents:
      guest: {interrupt: ALWAYS}
      desk: {functions: [note]}
    start: {from: guest, to: desk, content: Hello.}
"""
PARENT_REPLIES = [{"tool_calls": [{"name": "note", "arguments": {"message": "Tea."}}]}, "Done."]

PLAIN = """
    roost: 1
    agents:
      USER: {interrupt: ALWAYS}
      helper: {}
    start: {from: USER, to: helper, content: Hi.}
"""


def _parent(folder: Path) -> Flow:
    (folder / "note.yaml").write_text(NOTE_SUBFLOW)
    return flow_from_yaml(PARENT, replies=PARENT_REPLIES, path=folder / "front-desk.yaml")


async def test_a_sub_flows_run_lands_in_the_workspaces_store(tmp_path: Path) -> None:
    workspace = Workspace(str(tmp_path / "runs.db"))
    flow = _parent(tmp_path)
    held: list[str] = []
    runner = workspace.runner(
        flow, workspace.new_log("parent"), memory=workspace.memory_for(flow), hold=held.append
    )
    state = await runner.start()
    assert state.status == "paused"
    children = [run for run in workspace.store.runs() if run.parent == "parent"]
    assert [run.flow_name for run in children] == ["note"]
    assert held == [children[0].id]  # its lease is held while the parent's step runs
    assert workspace.store.log(children[0].id).load()[0].type == "run_start"


async def test_runs_of_one_store_share_its_memory(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    first = Workspace(db)
    flow = _parent(tmp_path)
    await first.runner(flow, first.new_log("parent"), memory=first.memory_for(flow)).start()
    assert [entry.key for entry in first.memory.entries("shared:guests")] == ["tea"]
    later = Workspace(db)  # another command on the same store
    ask = flow_from_yaml(ASK, path=tmp_path / "ask.yaml")
    state = await later.runner(ask, later.new_log("asked"), memory=later.memory_for(ask)).start()
    said = [entry.content for entry in state.history if entry.from_ == "clerk"]
    assert "- tea: The guest drinks green tea." in said[-1]


def test_memory_is_for_flows_that_may_remember(tmp_path: Path) -> None:
    workspace = Workspace(str(tmp_path / "runs.db"))
    assert workspace.memory_for(flow_from_yaml(PLAIN, replies=["Hello."])) is None
    assert workspace.memory_for(_parent(tmp_path)) is workspace.memory  # by its sub-flow
    assert not (tmp_path / "runs.db").exists()  # nothing opened the store yet


def test_a_runner_keeps_images_where_its_log_does_unless_told(tmp_path: Path) -> None:
    workspace = Workspace(str(tmp_path / "runs.db"))
    flow = flow_from_yaml(PLAIN, replies=["Hello."])
    stored = workspace.runner(flow, workspace.new_log("stored"), memory=None)
    assert isinstance(stored.images, SqlImages)
    told = MemoryImages()
    given = workspace.runner(flow, MemoryLog("given"), memory=None, images=told)
    assert given.images is told
    assert workspace.images is workspace.images  # one image store for the workspace


def test_beside_a_stored_log_is_its_store(tmp_path: Path) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    log = store.new_log("run")
    assert Workspace.beside(log).store is store


def test_beside_a_log_in_memory_is_the_store_roost_db_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOST_DB", str(tmp_path / "elsewhere.db"))
    workspace = Workspace.beside(MemoryLog("run"))
    monkeypatch.setenv("ROOST_DB", str(tmp_path / "later.db"))  # settled when made
    assert workspace.store.url.endswith("elsewhere.db")


async def test_a_run_from_python_keeps_its_sub_flow_runs_in_memory(tmp_path: Path) -> None:
    workspace = Workspace(str(tmp_path / "runs.db"))
    flow = _parent(tmp_path)
    log = workspace.new_log("parent")
    runner = Workspace.runner_in_memory(flow, log, memory=workspace.memory, on_event=None)
    await runner.start()
    assert [run.id for run in workspace.store.runs()] == ["parent"]  # the child is not stored
    assert [entry.key for entry in workspace.memory.entries("shared:guests")] == ["tea"]


def test_close_lets_go_of_its_own_store_only(tmp_path: Path) -> None:
    own = Workspace(str(tmp_path / "own.db"))
    opened = own.store
    own.close()
    assert own.store is not opened  # opened again at its next use
    given = SqlStore(str(tmp_path / "given.db"))
    lent = Workspace(store=given)
    lent.memory.entries("shared:guests")
    lent.memory.close()
    assert lent.store is given
