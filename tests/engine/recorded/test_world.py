"""What a replay reads instead of the world: recalls, skills and times, each as recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.engine.recorded.world import RecordedClock, RecordedMemory, RecordedSkills
from roost.events import MemoryEntry, MemoryEvent, MessageEvent, SkillInfo, SkillsEvent
from roost.runstate import RunState

if TYPE_CHECKING:
    from roost.flow.models import Flow

TEA = MemoryEntry(key="tea", content="likes green tea")
WALKS = MemoryEntry(key="walks", content="walks at dawn")


@dataclass
class At:
    """A run position: only its next seq is read."""

    state: RunState = field(default_factory=RunState)

    def at(self, seq: int) -> At:
        self.state.next_seq = seq
        return self

    @property
    def flow(self) -> Flow:
        raise AssertionError("the world's recorded sources never read the flow")

    def cancel(self) -> bool:
        return False


def recall(seq: int, query: str, *entries: MemoryEntry) -> MemoryEvent:
    return MemoryEvent(
        seq=seq,
        run="r",
        ts="",
        node="bot",
        scope="bot",
        operation="recall",
        query=query,
        entries=entries,
    )


def test_a_recall_gives_the_entries_recorded_for_it_in_order_and_stores_nothing() -> None:
    memory = RecordedMemory([recall(2, "tea?", TEA, WALKS), recall(9, "walks?", WALKS)])
    memory.store("bot", MemoryEntry(key="new", content="x"), "r")
    assert memory.entries("bot") == []
    assert memory.recall("bot", "something else", 5) == []  # not the next recorded query
    assert memory.recall("bot", "tea?", 1) == [TEA]  # within the limit asked
    assert memory.recall("bot", "walks?", 5) == [WALKS]
    assert memory.recall("bot", "walks?", 5) == []  # each recorded recall answers once
    assert memory.recall("other", "tea?", 5) == []


def test_the_skills_are_the_list_recorded_last_at_or_before_the_next_event() -> None:
    first = (SkillInfo(name="brew", description="Brews tea.", source="flow"),)
    later = (*first, SkillInfo(name="pour", description="Pours it.", source="flow"))
    recorded = [
        SkillsEvent(seq=3, run="r", ts="", skills=first),
        SkillsEvent(seq=8, run="r", ts="", skills=later),
    ]
    skills, run = RecordedSkills(recorded), At()
    skills.bind(run)  # type: ignore[arg-type]
    shown = {}
    for seq in (2, 3, 7, 20):
        run.at(seq)
        shown[seq] = skills(None)  # type: ignore[arg-type]
    assert shown == {2: (), 3: first, 7: first, 20: later}


def test_each_event_gets_the_time_recorded_for_its_seq_and_later_ones_the_time_now() -> None:
    recorded = [
        MessageEvent(
            seq=0, run="r", ts="2001-01-01T00:00:00.000000Z", from_="a", to="b", content="x"
        ),
        MessageEvent(
            seq=1, run="r", ts="2001-01-01T00:00:05.000000Z", from_="b", to="a", content="y"
        ),
    ]
    clock, run = RecordedClock(recorded), At()
    clock.bind(run)  # type: ignore[arg-type]
    assert clock() == "2001-01-01T00:00:00.000000Z"
    run.at(1)
    assert clock() == "2001-01-01T00:00:05.000000Z"
    run.at(2)
    assert not clock().startswith("2001")
