"""Timeline entries: compaction summaries kept in memory, found again by words and dates;
and the sentence that tells a model which memory tools it has."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.events import CompactEvent, Event, MemoryEvent, TimelineEntry, ToolResultEvent
from roost.flow import check_flow_text
from roost.ports import MemoryLog
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.engine.conftest import LONG, make_flow
from tests.fakes.recording import Recording
from tests.store.conftest import pg_server, pg_url

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow

__all__ = ["pg_server", "pg_url"]  # fixtures, used by name
SCOPE = "flow:shore"


def shore(timeline: bool) -> Flow:
    """A pair chat long enough for its views to be summarised."""
    replies = f'["{LONG * 2}b", "{LONG * 2}a"]'
    return make_flow(
        f"""
        roost: 1
        name: shore
        memory: {{scope: flow, recall: 0, timeline: {str(timeline).lower()}}}
        defaults: {{provider: chat, max_rounds: 24, summary_provider: writer}}
        providers:
          chat: {{kind: scripted, context_window: 400, when_exhausted: cycle, replies: {replies}}}
          writer: {{kind: scripted, when_exhausted: cycle, replies: ["They spoke of the sea."]}}
        agents:
          a: {{role: You are a.}}
          b: {{role: You are b.}}
        start: {{from: a, to: b, content: "Tell me about the sea."}}
        """
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> SqlMemory:
    if request.param == "sqlite":
        return SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))
    return SqlMemory(SqlStore(request.getfixturevalue("pg_url")))


async def run(flow: Flow, memory: SqlMemory, run_id: str = "run-1") -> list[Event]:
    log = MemoryLog(run_id)
    await Runner(
        flow=flow, log=log, sources=Sources(providers=Recording(flow), memory=memory)
    ).start()
    return log.load()


def timeline_events(events: list[Event]) -> list[MemoryEvent]:
    return [e for e in events if isinstance(e, MemoryEvent) and e.operation == "timeline"]


async def test_each_summary_becomes_a_timeline_entry_of_the_speakers_memory(
    memory: SqlMemory,
) -> None:
    events = await run(shore(timeline=True), memory)
    summaries = [e for e in events if isinstance(e, CompactEvent) and e.stage == "summary"]
    kept = timeline_events(events)
    assert summaries and len(kept) == len(summaries)
    for compact, event in zip(summaries, kept, strict=True):
        assert event.seq == compact.seq + 1  # recorded with the compaction, in its step
        assert (event.node, event.scope) == (compact.node, SCOPE)
        assert event.timeline == TimelineEntry(at=compact.ts, run="run-1", summary=compact.summary)
    found = memory.timeline(SCOPE, "what of the sea?", 50)
    assert sorted(found, key=lambda e: e.at) == [e.timeline for e in kept]
    # Without timeline: true, summaries are only the view's.
    untold = await run(shore(timeline=False), memory, "run-2")
    assert any(isinstance(e, CompactEvent) and e.stage == "summary" for e in untold)
    assert timeline_events(untold) == []
    assert memory.timeline(SCOPE, "sea", 50) == found


async def test_a_replay_records_the_same_timeline_and_keeps_nothing(memory: SqlMemory) -> None:
    events = await run(shore(timeline=True), memory)
    before = memory.timeline(SCOPE, "sea", 50)
    assert timeline_events(events) and before
    report = await replay_run(None, events)
    assert report.identical
    assert timeline_events(report.events) == timeline_events(events)
    assert memory.timeline(SCOPE, "sea", 50) == before


RECALLER = """
roost: 1
name: shore
memory: {scope: flow, recall: 0}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - {name: memory__timeline_recall, arguments: ARGUMENTS}
      - Done. TERMINATE
agents:
  user: {interrupt: ALWAYS}
  keeper:
    role: You keep the log.
    provider: script
    functions: [memory#timeline_recall]
start: {from: user, to: keeper, content: "What did we say in February?"}
"""


def keep(memory: SqlMemory, at: str, summary: str) -> None:
    memory.keep_timeline(SCOPE, TimelineEntry(at=at, run="old-run", summary=summary))


async def recall_timeline(memory: SqlMemory, arguments: dict[str, object]) -> ToolResultEvent:
    flow = make_flow(RECALLER.replace("ARGUMENTS", json.dumps(arguments)))
    events = await run(flow, memory, "run-2")
    [result] = [e for e in events if isinstance(e, ToolResultEvent)]
    return result


@pytest.fixture
def seasons(memory: SqlMemory) -> SqlMemory:
    keep(memory, "2026-01-20T09:00:00.000000Z", "The sea was cold and grey in January.")
    keep(memory, "2026-02-01T00:00:00.000000Z", "The sea froze at the harbour on the first.")
    keep(memory, "2026-02-28T23:30:00.000000Z", "The sea calmed at the end of February.")
    keep(memory, "2026-03-02T12:00:00.000000Z", "The sea warmed in March.")
    keep(memory, "2026-02-10T12:00:00.000000Z", "The gulls came back.")
    return memory


async def test_timeline_recall_finds_entries_by_words_between_since_and_until(
    seasons: SqlMemory,
) -> None:
    result = await recall_timeline(
        seasons, {"query": "sea", "since": "2026-02-01", "until": "2026-02-28"}
    )
    assert not result.is_error
    lines = sorted(result.content.splitlines())
    # A date alone counts its whole day, at both ends; the gulls have no word of the query.
    assert lines == [
        "- 2026-02-01 00:00:00 UTC: The sea froze at the harbour on the first.",
        "- 2026-02-28 23:30:00 UTC: The sea calmed at the end of February.",
    ]


async def test_timeline_recall_takes_times_with_offsets_and_a_limit(seasons: SqlMemory) -> None:
    result = await recall_timeline(
        seasons, {"query": "sea", "since": "2026-02-01T02:00+02:00", "limit": 1}
    )
    assert len(result.content.splitlines()) == 1
    wide = await recall_timeline(seasons, {"query": "sea", "since": "2026-02-01T02:00+02:00"})
    # 02:00 at +02:00 is midnight UTC: the first of February is in, January is not.
    assert "froze" in wide.content and "January" not in wide.content
    assert len(wide.content.splitlines()) == 3


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"query": "sea", "since": "last week"}, "since: 'last week' is not an ISO date or time"),
        ({"query": "sea", "until": "2026-13-01"}, "until: '2026-13-01' is not an ISO date"),
        ({"query": "sea", "since": "0001-01-01T00:00+05:00"}, "is not an ISO date or time"),
        ({"query": "sea", "since": "2026-03-01", "until": "2026-02-01"}, "since is after until"),
        ({"query": "sea", "limit": 0}, "invalid arguments"),
        ({"since": "2026-02-01"}, "invalid arguments"),
    ],
)
async def test_bad_timeline_arguments_are_an_error_result_and_the_run_goes_on(
    seasons: SqlMemory, arguments: dict[str, object], words: str
) -> None:
    result = await recall_timeline(seasons, arguments)
    assert result.is_error and words in result.content


async def test_timeline_recall_replays_identically(seasons: SqlMemory) -> None:
    flow = make_flow(RECALLER.replace("ARGUMENTS", json.dumps({"query": "sea"})))
    events = await run(flow, seasons, "run-2")
    keep(seasons, "2026-04-01T00:00:00.000000Z", "The sea again.")  # the store moved on
    assert (await replay_run(None, events)).identical


def test_validation_knows_timeline_recall_and_suggests_it() -> None:
    flow = RECALLER.replace("ARGUMENTS", "{query: sea}")
    assert check_flow_text(flow, "shore.yaml").problems == []
    wrong = flow.replace("[memory#timeline_recall]", "[memory#timeline_recal]")
    [problem] = check_flow_text(wrong, "shore.yaml").problems
    assert "did you mean 'timeline_recall'" in str(problem)


# ------------------------------------------------------------------ the system prompt

NOTED = """
roost: 1
name: shore
memory: {scope: flow, recall: 0}
providers:
  script: {kind: scripted, replies: ["Noted. TERMINATE"]}
agents:
  user: {interrupt: ALWAYS}
  keeper:
    role: You keep the log.
    provider: script
    functions: FUNCTIONS
start: {from: user, to: keeper, content: "Hello."}
"""


async def sent_system(functions: str, memory: SqlMemory) -> tuple[str, list[Event]]:
    flow = make_flow(NOTED.replace("FUNCTIONS", functions))
    log, recording = MemoryLog("run-1"), Recording(flow)
    await Runner(flow=flow, log=log, sources=Sources(providers=recording, memory=memory)).start()
    return recording.sent[0][1].system, log.load()


async def test_the_system_prompt_names_the_memory_tools_the_agent_lists(
    memory: SqlMemory,
) -> None:
    system, events = await sent_system("[memory#timeline_recall, memory#store]", memory)
    assert system == (
        "You keep the log.\n\nYou have a memory that lasts across conversations: call "
        "memory__store to remember a fact or preference for later and "
        "memory__timeline_recall to find summaries of earlier conversations by words and dates."
    )
    assert (await replay_run(None, events)).identical
    untold, _ = await sent_system("[]", memory)  # an agent that lists none gets none
    assert untold == "You keep the log."


async def test_the_sentence_is_part_of_the_request_a_replay_compares(
    memory: SqlMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, events = await sent_system("[memory#recall]", memory)
    monkeypatch.setattr("roost.nodes.agent.MEMORY_NOTE", "Other words: {uses}.")
    report = await replay_run(None, events)
    assert not report.identical  # the request's digest covers the sentence
    assert report.difference is not None and report.difference.index == 2  # the reply's call
