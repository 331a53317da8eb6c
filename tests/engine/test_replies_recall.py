"""Recall in a reply that pauses or fails midway: made once, kept to the reply's end.

The entries recalled before a reply's first request are added to every request
of that reply, also to those made after a pause for a tool's approval (in this
process or another) or a retried step; the recall itself is made and recorded
once, and replay sends the same requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.events import MemoryEntry, MemoryEvent
from roost.ports import MemoryLog
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.engine.conftest import make_flow
from tests.fakes.recording import Recording

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow
    from roost.messages import ModelRequest

FLOW = """
roost: 1
name: teas
memory: {scope: flow, recall: 3}
providers:
  script:
    kind: scripted
    replies: REPLIES
tools:
  mean: {python: "statistics:fmean", description: The mean of some numbers., approval: APPROVAL}
agents:
  user: {interrupt: ALWAYS}
  helper: {provider: script, functions: [mean]}
start: {from: user, to: helper, content: "Which tea, and what is the mean of 2, 4 and 9?"}
"""

TEA = MemoryEntry(key="tea", content="The user drinks green tea, no sugar.", importance=0.9)


ASKS_FOR_MEAN = "{tool_calls: [{name: mean, arguments: {data: [2, 4, 9]}}]}"
ANSWERS = "The mean is 5; green tea it is."


def flow(approval: str, replies: tuple[str, ...] = (ASKS_FOR_MEAN, ANSWERS)) -> Flow:
    text = FLOW.replace("APPROVAL", approval).replace("REPLIES", f"[{', '.join(replies)}]")
    return make_flow(text)


@pytest.fixture
def memory(tmp_path: Path) -> SqlMemory:
    bank = SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))
    bank.store("flow:teas", TEA, "earlier-run")
    return bank


def recalls(log: MemoryLog) -> list[MemoryEvent]:
    return [e for e in log.load() if isinstance(e, MemoryEvent) and e.operation == "recall"]


def last_user_text(request: ModelRequest) -> str:
    return next(m.content for m in reversed(request.messages) if m.role == "user")


async def unpaused_requests(memory: SqlMemory) -> list[ModelRequest]:
    """The requests of the same reply made without a pause: what a resumed one must match."""
    recording = Recording(flow("never"))
    await Runner(
        flow=flow("never"),
        log=MemoryLog("straight"),
        sources=Sources(providers=recording, memory=memory),
    ).start()
    return [request for _, request in recording.sent]


async def test_a_reply_resumed_after_approval_keeps_its_recall(memory: SqlMemory) -> None:
    paused_flow = flow("always")
    log, recording = MemoryLog("approved"), Recording(paused_flow)
    state = await Runner(
        flow=paused_flow, log=log, sources=Sources(providers=recording, memory=memory)
    ).start()
    assert state.status == "paused" and state.pending is not None
    assert state.pending.reason == "tool_approval"
    # Another process answers: a new Runner, on the same log, folded from its events.
    resumed = Runner(flow=paused_flow, log=log, sources=Sources(providers=recording, memory=memory))
    state = await resumed.continue_("yes")
    assert state.status == "paused" and state.last_message is not None
    assert state.last_message.content == "The mean is 5; green tea it is."

    [recall] = recalls(log)  # made once, before the first request
    assert recall.entries == (TEA,)
    first, after_approval = (request for _, request in recording.sent)
    assert "- tea: The user drinks green tea, no sugar." in last_user_text(first)
    assert "- tea: The user drinks green tea, no sugar." in last_user_text(after_approval)
    straight = await unpaused_requests(memory)
    assert [r.messages for r in straight] == [first.messages, after_approval.messages]
    assert (await replay_run(None, log.load())).identical


async def test_the_memory_changing_during_the_pause_changes_not_the_reply(
    memory: SqlMemory,
) -> None:
    paused_flow = flow("always")
    log, recording = MemoryLog("approved"), Recording(paused_flow)
    await Runner(
        flow=paused_flow, log=log, sources=Sources(providers=recording, memory=memory)
    ).start()
    memory.forget("flow:teas", "tea", "someone-else")
    await Runner(
        flow=paused_flow, log=log, sources=Sources(providers=recording, memory=memory)
    ).continue_("yes")
    assert len(recalls(log)) == 1
    after_approval = recording.sent[-1][1]
    assert "- tea: The user drinks green tea, no sugar." in last_user_text(after_approval)
    assert (await replay_run(None, log.load())).identical


@pytest.mark.parametrize(
    "replies",
    [(ASKS_FOR_MEAN, "{error: overloaded}", ANSWERS), ("{error: overloaded}", ANSWERS)],
    ids=["after-a-tool-round", "at-the-first-request"],
)
async def test_a_retried_reply_keeps_its_recall(
    memory: SqlMemory, replies: tuple[str, ...]
) -> None:
    failing = flow("never", replies)
    log, recording = MemoryLog("retried"), Recording(failing)
    state = await Runner(
        flow=failing, log=log, sources=Sources(providers=recording, memory=memory)
    ).start()
    assert state.status == "error"
    memory.forget("flow:teas", "tea", "someone-else")  # the retry still sees what was recalled
    state = await Runner(
        flow=failing, log=log, sources=Sources(providers=recording, memory=memory)
    ).retry()
    assert state.last_message is not None and state.last_message.content == ANSWERS
    assert len(recalls(log)) == 1
    for _, request in recording.sent:
        assert "- tea: The user drinks green tea, no sugar." in last_user_text(request)
    assert (await replay_run(None, log.load())).identical
