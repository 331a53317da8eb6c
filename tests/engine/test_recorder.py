"""The recorder's written-out builders make exactly the events the generic one makes."""

from __future__ import annotations

from roost.engine.recorder import Recorder
from roost.events import (
    LlmAttempt,
    LlmCallEvent,
    LlmResponse,
    LlmUsage,
    MessageEvent,
    RecordedToolCall,
    SelectEvent,
    event_json,
    parse_event,
)
from roost.ports import MemoryLog
from roost.runstate import RunState


def _pair() -> tuple[Recorder, Recorder]:
    return Recorder(RunState(), MemoryLog("r1")), Recorder(RunState(), MemoryLog("r1"))


def test_add_message_matches_add() -> None:
    fast, slow = _pair()
    made = fast.add_message("alice", "room", "Hello.")
    expected = slow.add(MessageEvent, from_="alice", to="room", content="Hello.")
    assert list(made.__dict__) == list(expected.__dict__)
    assert made.model_copy(update={"ts": ""}) == expected.model_copy(update={"ts": ""})
    assert fast.state.history == [made] and slow.state.history == [expected]
    assert fast.state.next_seq == slow.state.next_seq == 1


def test_add_select_matches_add() -> None:
    fast, slow = _pair()
    made = fast.add_select("room", ("bob", "carol"), "bob", "round_robin")
    expected = slow.add(
        SelectEvent, channel="room", candidates=("bob", "carol"), chosen="bob", by="round_robin"
    )
    made_json = event_json(made.model_copy(update={"ts": "t"}))
    assert made_json == event_json(expected.model_copy(update={"ts": "t"}))
    assert fast.state.selects == slow.state.selects == {"room": 1}
    assert fast.state.step == slow.state.step == ("bob", "room")


def test_add_llm_call_matches_add() -> None:
    fast, slow = _pair()
    fields = {
        "node": "alice",
        "provider": "mock",
        "model": "scripted",
        "tools": ("lookup",),
        "request_digest": "sha256:00",
        "response": LlmResponse(text="Hi."),
        "usage": LlmUsage(prompt_tokens=3, completion_tokens=2),
        "attempts": (LlmAttempt(provider="mock", model="scripted", outcome="ok"),),
    }
    made = fast.add_llm_call(*fields.values())  # type: ignore[arg-type]
    expected = slow.add(LlmCallEvent, **fields)
    assert list(made.__dict__) == list(expected.__dict__)
    assert made.model_copy(update={"ts": "t"}) == expected.model_copy(update={"ts": "t"})
    assert fast.state.provider_attempts == slow.state.provider_attempts == {"mock": 1}
    assert fast.state.usage == slow.state.usage


def test_built_events_equal_their_json_read_back() -> None:
    # What the engine holds in memory is what another process loads from the log:
    # the same values, tuples included, so states and comparisons agree.
    recorder = Recorder(RunState(), MemoryLog("r1"))
    made = [
        recorder.add_message("alice", "room", "Hello."),
        recorder.add_select("room", ("bob", "carol"), "bob", "round_robin"),
        recorder.add_llm_call(
            "bob",
            "mock",
            "scripted",
            ("lookup",),
            "sha256:00",
            LlmResponse(text="Hi.", tool_calls=(RecordedToolCall(id="c1", name="lookup"),)),
            LlmUsage(prompt_tokens=3, completion_tokens=2),
            (),
        ),
    ]
    for event in made:
        assert parse_event(event_json(event)) == event
