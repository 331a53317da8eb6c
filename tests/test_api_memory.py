"""Memory from Python: ``roost.run`` remembers across runs, in the store the CLI would use.

A flow with a ``memory:`` section run from Python keeps what it is told in the
run store's memory: the one ``memory=`` gives, else that of the log's own
store, else the one ``ROOST_DB`` names, else ``.roost/roost.db`` in the nearest
folder up that has a ``.roost`` folder. Runs kept in memory or in a JSON Lines
file remember too; a flow without memory opens no store.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import roost
from roost.engine.sources import Sources
from roost.events import MemoryEntry, MemoryEvent
from roost.flow import load_flow_text
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.cli_inprocess import run_cli
from tests.fakes.flows import ASK_SUBFLOW, NOTE_SUBFLOW
from tests.fakes.flows import ASK_TEA as ASK
from tests.fakes.flows import MEMORY_PARENT as PARENT
from tests.fakes.flows import TELL_TEA as TELL

if TYPE_CHECKING:
    from roost.flow.models import Flow

HELLO = Path(__file__).resolve().parent.parent / "flows" / "hello.yaml"
TEA = MemoryEntry(key="tea", content="The guest drinks green tea.", importance=0.9)
RECALLED = "- tea: The guest drinks green tea."


def flow(text: str) -> Flow:
    return load_flow_text(text, "flow.yaml")


def entries(db: Path) -> list[MemoryEntry]:
    return SqlMemory(SqlStore(f"sqlite:///{db}")).entries("shared:guests")


def answer(state: roost.RunState) -> str:
    assert state.last_message is not None
    return state.last_message.content


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with a ``.roost`` folder, the current one, and no ROOST_DB."""
    monkeypatch.delenv("ROOST_DB", raising=False)
    (tmp_path / ".roost").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_a_preference_stored_by_one_run_is_recalled_by_the_next(project: Path) -> None:
    await roost.run(HELLO)  # a flow without memory opens no store
    assert not (project / ".roost" / "roost.db").exists()
    told = await roost.run(flow(TELL))
    assert told.status == "terminated"
    assert entries(project / ".roost" / "roost.db") == [TEA]

    log = roost.MemoryLog("asked")
    asked = await roost.run(flow(ASK), log=log)
    assert answer(asked).startswith("Which tea should I make?")
    assert RECALLED in answer(asked)
    [recall] = [e for e in log.load() if isinstance(e, MemoryEvent)]
    assert recall.operation == "recall" and recall.entries == (TEA,)


def test_json_lines_runs_in_a_subfolder_keep_memory_beside_the_projects_store(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = project / "notes" / "today"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    told = roost.run_sync(flow(TELL), log=roost.JsonlLog(work / "tell.jsonl", "tell-1"))
    assert told.status == "terminated"
    assert entries(project / ".roost" / "roost.db") == [TEA]
    assert not (work / ".roost").exists()

    asked = roost.run_sync(flow(ASK), log=roost.JsonlLog(work / "ask.jsonl", "ask-1"))
    assert RECALLED in answer(asked)
    # The runs themselves stay in their files: the store holds their memory only.
    assert SqlStore(f"sqlite:///{project / '.roost' / 'roost.db'}").runs() == []


async def test_roost_db_names_the_store_memory_is_kept_in(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = project / "elsewhere.db"
    monkeypatch.setenv("ROOST_DB", str(elsewhere))
    await roost.run(flow(TELL))
    assert entries(elsewhere) == [TEA]
    assert not (project / ".roost" / "roost.db").exists()


async def test_a_stored_run_keeps_memory_in_its_own_store(project: Path) -> None:
    own = project / "own.db"
    store = SqlStore(f"sqlite:///{own}")
    await roost.run(flow(TELL), log=store.new_log("tell-1"))
    assert entries(own) == [TEA]
    assert not (project / ".roost" / "roost.db").exists()


async def test_a_bank_given_is_the_one_used(project: Path) -> None:
    given = project / "given.db"
    bank = roost.memory_bank(str(given))
    await roost.run(flow(TELL), memory=bank)
    asked = await roost.run(flow(ASK), memory=bank)
    assert RECALLED in answer(asked)
    assert entries(given) == [TEA]
    assert not (project / ".roost" / "roost.db").exists()


async def test_a_runner_remembers_with_the_bank_it_is_given(project: Path) -> None:
    told = await roost.Runner(
        flow=flow(TELL), log=roost.MemoryLog("t"), sources=Sources(memory=roost.memory_bank())
    ).start()
    assert told.status == "terminated"
    runner = roost.Runner(
        flow=flow(ASK), log=roost.MemoryLog("a"), sources=Sources(memory=roost.memory_bank())
    )
    assert RECALLED in answer(await runner.start())


async def test_the_api_recalls_what_the_command_line_stored(project: Path) -> None:
    (project / "tell.yaml").write_text(TELL)
    assert run_cli("run", "tell.yaml", cwd=project).returncode == 0
    asked = await roost.run(flow(ASK))
    assert RECALLED in answer(asked)


async def test_a_subflow_run_from_python_remembers(project: Path) -> None:
    (project / "note.yaml").write_text(NOTE_SUBFLOW)
    (project / "ask.yaml").write_text(ASK_SUBFLOW)
    for tool, message in (("note", "I like green tea."), ("ask", "Which tea?")):
        (project / "desk.yaml").write_text(PARENT.replace("TOOL", tool).replace("MESSAGE", message))
        log = roost.MemoryLog(f"desk-{tool}")
        await roost.run(roost.load_flow(project / "desk.yaml"), log=log)
    [result] = [e for e in log.load() if e.type == "tool_result"]
    assert RECALLED in result.content
    assert entries(project / ".roost" / "roost.db") == [TEA]
