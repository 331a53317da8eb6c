"""Memory across runs: a preference stored in one run is recalled in the next, and replays."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.events import Event, LlmCallEvent, MemoryEntry, MemoryEvent, ToolResultEvent
from roost.ports import MemoryLog
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.engine.conftest import make_flow
from tests.fakes.recording import Recording
from tests.store.conftest import pg_server, pg_url

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow

__all__ = ["pg_server", "pg_url"]  # fixtures, used by name

TELL = """
roost: 1
name: assistant
memory: {scope: SCOPE, recall: RECALL}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - name: memory__store
            arguments: {key: tea, content: "The user drinks green tea, no sugar.", importance: 0.9}
      - Noted.
agents:
  user: {interrupt: ALWAYS}
  helper:
    provider: script
    functions: [memory#store, memory#forget]
start: {from: user, to: helper, content: "I only drink green tea."}
"""

ASK = """
roost: 1
name: assistant
memory: {scope: SCOPE, recall: RECALL}
providers:
  script: {kind: scripted, replies: [{echo: last}]}
agents:
  user: {interrupt: ALWAYS}
  helper: {provider: script}
start: {from: user, to: helper, content: "Which tea should I make?"}
"""


def flow(text: str, scope: str = "flow", recall: int = 5) -> Flow:
    return make_flow(text.replace("SCOPE", scope).replace("RECALL", str(recall)))


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> SqlMemory:
    if request.param == "sqlite":
        return SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))
    return SqlMemory(SqlStore(request.getfixturevalue("pg_url")))


async def run(flow: Flow, memory: SqlMemory, run_id: str) -> tuple[list[Event], Recording]:
    log, recording = MemoryLog(run_id), Recording(flow)
    await Runner(flow=flow, log=log, sources=Sources(providers=recording, memory=memory)).start()
    return log.load(), recording


def memory_events(events: list[Event]) -> list[MemoryEvent]:
    return [e for e in events if isinstance(e, MemoryEvent)]


async def test_a_preference_stated_in_one_run_is_recalled_in_the_next(memory: SqlMemory) -> None:
    told, _ = await run(flow(TELL), memory, "run-1")
    stored = memory_events(told)
    tea = MemoryEntry(key="tea", content="The user drinks green tea, no sugar.", importance=0.9)
    assert [(e.operation, e.scope, e.entry) for e in stored] == [("store", "flow:assistant", tea)]
    assert memory.entries("flow:assistant") == [tea]

    asked, recording = await run(flow(ASK), memory, "run-2")
    [recall] = memory_events(asked)
    assert recall.operation == "recall" and recall.entries == (tea,)
    assert recall.query == "Which tea should I make?"
    latest = recording.sent[0][1].messages[-1].content
    assert latest.startswith("Which tea should I make?")
    assert "- tea: The user drinks green tea, no sugar." in latest
    # The recall comes before the reply's model call, which saw it.
    call = next(e for e in asked if isinstance(e, LlmCallEvent))
    assert recall.seq < call.seq


async def test_replay_is_identical_though_the_memory_changed_since(memory: SqlMemory) -> None:
    told, _ = await run(flow(TELL), memory, "run-1")
    asked, _ = await run(flow(ASK), memory, "run-2")
    memory.forget("flow:assistant", "tea", "by-hand")  # the store moved on; the record did not
    assert (await replay_run(None, asked)).identical
    assert (await replay_run(None, told)).identical
    assert memory.entries("flow:assistant") == []  # a replay stores nothing


async def test_recall_zero_adds_nothing(memory: SqlMemory) -> None:
    await run(flow(TELL), memory, "run-1")
    asked, recording = await run(flow(ASK, recall=0), memory, "run-2")
    assert memory_events(asked) == []
    assert recording.sent[0][1].messages[-1].content == "Which tea should I make?"


async def test_agent_scopes_do_not_share(memory: SqlMemory) -> None:
    await run(flow(TELL, scope="agent"), memory, "run-1")
    assert [e.key for e in memory.entries("agent:assistant/helper")] == ["tea"]
    other = flow(ASK, scope="agent").model_copy(update={"name": "other"})
    asked, _ = await run(other, memory, "run-2")
    assert memory_events(asked) == []


async def test_a_store_with_bad_arguments_is_an_error_result_and_no_event(
    memory: SqlMemory,
) -> None:
    text = TELL.replace("importance: 0.9", "importance: 7")
    told, _ = await run(flow(text), memory, "run-1")
    [result] = [e for e in told if isinstance(e, ToolResultEvent)]
    assert result.is_error and "importance" in result.content
    assert memory_events(told) == []
    assert memory.entries("flow:assistant") == []


@pytest.mark.parametrize("field", ["key", "content"])
async def test_a_nul_in_a_stored_entry_is_an_error_result_on_every_store(
    memory: SqlMemory, field: str
) -> None:
    nul = {"key": ("key: tea", 'key: "te\\0a"'), "content": ("green tea", "green te\\0a")}
    text = TELL.replace(*nul[field])
    told, _ = await run(flow(text), memory, "run-1")
    [result] = [e for e in told if isinstance(e, ToolResultEvent)]
    assert result.is_error and "NUL" in result.content
    assert memory_events(told) == []
