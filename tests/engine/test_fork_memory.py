"""Forks see the memory of their fork point, and what they write never leaves them.

The model here stores and forgets what each message asks it to ("remember KEY:
CONTENT", "forget KEY"), whichever point of a run it answers at, so a parent and
its forks can go on differently from the same script.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.engine.fork_memory import ForkMemory
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.events import Event, MemoryEntry, MemoryEvent, RunStartEvent, ToolResultEvent
from roost.messages import AssistantMessage, ModelRequest, ModelResponse, ToolCall, UserMessage
from roost.ports import MemoryLog
from roost.runstate import RunState
from roost.store.forks import fork_prefix
from roost.store.memory import SqlMemory, moment
from roost.store.sql import SqlStore
from tests.engine.conftest import make_flow
from tests.store.conftest import pg_server, pg_url

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from roost.ports import EventLog
    from roost.providers.base import Provider, TextCallback

__all__ = ["pg_server", "pg_url"]  # fixtures, used by name

NOTES = make_flow(
    """
    roost: 1
    name: notes
    memory: {scope: flow, recall: 5}
    providers:
      model: {kind: scripted}
    agents:
      user: {interrupt: ALWAYS}
      helper: {provider: model, functions: [memory#store, memory#forget]}
    start: {from: user, to: helper, content: "Hello."}
    """
)
SCOPE = "flow:notes"
ASKED = re.compile(r"(remember|forget) (\w+)(?:: (.*))?")


class Rememberer:
    """A model that stores or forgets what the latest message asks, then says "Noted."."""

    name = "model"
    model = "rememberer"

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        latest = request.messages[-1]
        asked = ASKED.match(latest.content) if isinstance(latest, UserMessage) else None
        if asked is None:
            return ModelResponse(message=AssistantMessage(content="Noted."))
        verb, key, content = asked.groups()
        if verb == "remember":
            tool, arguments = "memory__store", {"key": key, "content": content}
        else:
            tool, arguments = "memory__forget", {"key": key}
        call = ToolCall(id=f"call-{key}", name=tool, arguments=arguments)
        return ModelResponse(message=AssistantMessage(tool_calls=(call,)))


def rememberer(name: str) -> Provider:
    return Rememberer()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlStore:
    if request.param == "sqlite":
        return SqlStore(f"sqlite:///{tmp_path / 'roost.db'}")
    return SqlStore(request.getfixturevalue("pg_url"))


@pytest.fixture
def bank(store: SqlStore) -> SqlMemory:
    return SqlMemory(store)


def runner(log: EventLog, bank: SqlMemory) -> Runner:
    return Runner(flow=NOTES, log=log, sources=Sources(providers=rememberer, memory=bank))


def keys(entries: Iterable[MemoryEntry]) -> list[str]:
    return sorted(entry.key for entry in entries)


def recalled(events: list[Event]) -> list[list[str]]:
    """The keys each recall of the run found."""
    return [
        keys(e.entries or ())
        for e in events
        if isinstance(e, MemoryEvent) and e.operation == "recall"
    ]


async def parent_with_a_fork_point(store: SqlStore, bank: SqlMemory) -> int:
    """Run "p": tea stored, then (after the fork point it returns) city stored."""
    parent = runner(store.new_log("p"), bank)
    await parent.start("remember tea: The user drinks green tea.")
    at = parent.state.next_seq  # the run waits for the user: a point to fork at
    await parent.continue_("remember city: The user lives in Lyon.")
    assert keys(bank.entries(SCOPE)) == ["city", "tea"]
    return at


async def test_a_fork_sees_the_memory_of_its_fork_point(store: SqlStore, bank: SqlMemory) -> None:
    at = await parent_with_a_fork_point(store, bank)
    log = store.fork("p", at, "f")
    [start] = log.load()[:1]
    assert isinstance(start, RunStartEvent)
    assert start.memory_at == store.log("p").load()[at - 1].ts
    fork = runner(log, bank)
    assert isinstance(fork.memory, ForkMemory)
    assert keys(fork.memory.entries(SCOPE)) == ["tea"]  # city came after the fork point
    await fork.continue_("tea or city of Lyon?")
    assert recalled(log.load())[-1] == ["tea"]
    # The parent, going on, sees what it stored after the fork point.
    parent = runner(store.log("p"), bank)
    assert parent.memory is bank  # no fork: the shared memory itself
    await parent.continue_("tea or city of Lyon?")
    assert recalled(store.log("p").load())[-1] == ["city", "tea"]


async def test_what_a_fork_stores_is_seen_by_the_fork_alone(
    store: SqlStore, bank: SqlMemory
) -> None:
    at = await parent_with_a_fork_point(store, bank)
    log = store.fork("p", at, "f")
    fork = runner(log, bank)
    await fork.continue_("remember boat: The user owns a small boat.")
    stored = [e for e in log.load() if isinstance(e, MemoryEvent) and e.operation == "store"]
    assert [e.entry.key for e in stored if e.entry] == ["tea", "boat"]  # tea: inherited
    await fork.continue_("boat?")
    assert recalled(log.load())[-1] == ["boat"]
    # Neither the shared memory, nor the parent, nor a new run sees the boat.
    assert keys(bank.entries(SCOPE)) == ["city", "tea"]
    assert bank.recall(SCOPE, "boat", 5) == []
    await runner(store.log("p"), bank).continue_("boat?")
    assert all("boat" not in found for found in recalled(store.log("p").load()))
    fresh = runner(store.new_log("n"), bank)
    await fresh.start("boat?")
    assert recalled(store.log("n").load()) == []


async def test_a_fork_forgets_for_itself_what_it_can_see(store: SqlStore, bank: SqlMemory) -> None:
    at = await parent_with_a_fork_point(store, bank)
    log = store.fork("p", at, "f")
    fork = runner(log, bank)
    await fork.continue_("forget tea")
    await fork.continue_("forget city")  # stored by the parent after the fork point
    results = [e for e in log.load() if isinstance(e, ToolResultEvent)][-2:]
    assert [(r.is_error, r.content) for r in results] == [
        (False, "Forgot 'tea'."),
        (True, "Nothing is remembered under 'city'."),
    ]
    assert keys(fork.memory.entries(SCOPE)) == []
    assert keys(bank.entries(SCOPE)) == ["city", "tea"]  # the shared memory keeps both


async def test_a_fork_replays_identically_though_the_memory_changed(
    store: SqlStore, bank: SqlMemory
) -> None:
    at = await parent_with_a_fork_point(store, bank)
    log = store.fork("p", at, "f")
    fork = runner(log, bank)
    await fork.continue_("remember boat: The user owns a small boat.")
    await fork.continue_("the boat and tea?")
    bank.forget(SCOPE, "tea", "elsewhere")
    events = log.load()
    assert (await replay_run(None, events)).identical
    assert keys(bank.entries(SCOPE)) == ["city"]  # a replay writes nothing


async def test_a_fork_of_a_fork_sees_the_first_fork_point_and_the_first_forks_writes(
    store: SqlStore, bank: SqlMemory
) -> None:
    at = await parent_with_a_fork_point(store, bank)
    first = store.fork("p", at, "f")
    await runner(first, bank).continue_("remember boat: The user owns a small boat.")
    first_start = first.load()[0]
    assert isinstance(first_start, RunStartEvent)
    second = store.fork("f", len(first.load()), "g")
    start = second.load()[0]
    assert isinstance(start, RunStartEvent)
    assert (start.parent, start.memory_at) == ("f", first_start.memory_at)
    view = runner(second, bank).memory
    assert view is not None
    assert keys(view.entries(SCOPE)) == ["boat", "tea"]  # the first fork's boat, not city
    # A fork made inside the part the first fork shares with "p" sees that earlier time.
    early = store.fork("f", 1, "h")
    early_start = early.load()[0]
    assert isinstance(early_start, RunStartEvent)
    assert early_start.memory_at == store.log("p").load()[0].ts
    early_view = runner(early, bank).memory
    assert early_view is not None and early_view.entries(SCOPE) == []


async def test_a_file_fork_sees_the_same_time_as_a_stored_one(
    store: SqlStore, bank: SqlMemory
) -> None:
    at = await parent_with_a_fork_point(store, bank)
    events = store.log("p").load()
    prefix = fork_prefix(events, at, "file-fork")
    stored = store.fork("p", at, "f").load()[0]
    assert isinstance(prefix[0], RunStartEvent) and isinstance(stored, RunStartEvent)
    assert prefix[0].memory_at == stored.memory_at == events[at - 1].ts
    # The file fork goes on, and is forked again: the first fork point's time is kept.
    log = MemoryLog("file-fork", prefix)
    await runner(log, bank).continue_("remember boat: The user owns a small boat.")
    again = fork_prefix(log.load(), len(log.load()), "again")
    assert isinstance(again[0], RunStartEvent) and again[0].memory_at == events[at - 1].ts
    view = runner(MemoryLog("again", again), bank).memory
    assert view is not None and keys(view.entries(SCOPE)) == ["boat", "tea"]


# ---------------------------------------------------------------------------- reading "as of"


def later() -> str:
    """The store's time now, after a pause long enough to order two writes by their times."""
    time.sleep(0.002)
    return moment()


def written(operation: str, key: str, content: str, ts: str) -> MemoryEvent:
    """A ``memory`` event of the fork itself: one of its own writes."""
    return MemoryEvent(
        seq=1,
        run="f",
        ts=ts,
        node="helper",
        scope=SCOPE,
        operation=operation,  # type: ignore[arg-type]
        entry=MemoryEntry(key=key, content=content),
    )


def test_a_fork_read_as_of_a_moment_sees_nothing_written_after_its_fork_point(
    bank: SqlMemory,
) -> None:
    """Whichever of the fork point and the moment asked for is earlier bounds what is seen."""
    bank.store(SCOPE, MemoryEntry(key="tea", content="green tea"), "p")
    before = later()
    bank.store(SCOPE, MemoryEntry(key="cat", content="a cat named tea lover"), "p")
    fork_point = later()
    bank.store(SCOPE, MemoryEntry(key="tea", content="black tea"), "p")
    bank.store(SCOPE, MemoryEntry(key="city", content="tea in Lyon"), "p")
    after = later()
    fork = ForkMemory(bank, RunState(), fork_point)
    for as_of in (None, after):  # a moment after the fork point: the fork point's memory
        assert fork.entries(SCOPE, as_of=as_of) == [
            MemoryEntry(key="tea", content="green tea"),
            MemoryEntry(key="cat", content="a cat named tea lover"),
        ]
        assert keys(fork.recall(SCOPE, "tea Lyon", 5, as_of=as_of)) == ["cat", "tea"]
    # A moment before the fork point: that moment's memory, without what came between.
    assert fork.entries(SCOPE, as_of=before) == [MemoryEntry(key="tea", content="green tea")]
    assert keys(fork.recall(SCOPE, "tea lover", 5, as_of=before)) == ["tea"]


def test_a_fork_read_as_of_a_moment_sees_its_own_writes_of_then_and_not_later(
    bank: SqlMemory,
) -> None:
    bank.store(SCOPE, MemoryEntry(key="tea", content="green tea"), "p")
    fork_point = later()
    state = RunState()
    state.memory_writes.append(written("store", "boat", "a small boat", later()))
    between = later()
    state.memory_writes.append(written("forget", "tea", "", later()))
    state.memory_writes.append(written("store", "bike", "a red bike", later()))
    fork = ForkMemory(bank, state, fork_point)
    assert keys(fork.entries(SCOPE, as_of=between)) == ["boat", "tea"]
    assert keys(fork.recall(SCOPE, "tea boat bike", 5, as_of=between)) == ["boat", "tea"]
    assert keys(fork.entries(SCOPE)) == ["bike", "boat"]
    # What the fork forgot is not recalled from the shared memory, which still holds it.
    assert keys(fork.recall(SCOPE, "tea boat bike", 5)) == ["bike", "boat"]
    assert keys(bank.recall(SCOPE, "tea", 5)) == ["tea"]
