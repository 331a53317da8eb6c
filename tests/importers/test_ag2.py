"""AG2's JSON: a chat's messages, its tool calls paired with their results."""

from __future__ import annotations

from tests.importers.conftest import events_of, messages


def test_a_two_agent_chat_keeps_its_tool_calls_paired_and_the_failing_one_an_error() -> None:
    events = events_of("ag2_two.json", "ag2")
    assert messages(events) == [
        ("user_proxy", "maths_bot", "How much is 2 + 2, and 1 / 0?"),
        ("maths_bot", "user_proxy", "2 + 2 = 4, and 1 / 0 has no value. TERMINATE"),
    ]
    results = [(e["id"], e["content"], e["is_error"]) for e in events if e["type"] == "tool_result"]
    assert results == [("call_1", "4", False), ("call_2", "Error: division by zero", True)]
    calls = [e["id"] for e in events if e["type"] == "tool_call"]
    assert calls == ["call_1", "call_2"]
    start = events[0]
    assert start["imported"]["format"] == "ag2" and start["imported"]["file"] == "ag2_two.json"
    assert "maths-bot in the imported run" in start["flow"]["text"]  # the original name kept
