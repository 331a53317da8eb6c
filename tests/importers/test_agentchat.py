"""AutoGen AgentChat's files: a TaskResult's messages, its speaker choices, a person's answers,
and a team's save_state() giving the same conversation."""

from __future__ import annotations

from tests.importers.conftest import events_of, messages


def test_a_group_chat_goes_through_a_channel_whose_choices_are_recorded() -> None:
    events = events_of("agentchat_selector.json", "agentchat")
    chosen = [e["chosen"] for e in events if e["type"] == "select"]
    assert chosen == ["writer", "critic", "editor"]
    assert {e["to"] for e in events if e["type"] == "message"} == {"chat"}
    usage = [
        e["usage"]["prompt_tokens"]
        for e in events
        if e["type"] == "llm_call" and e["provider"] == "recorded"
    ]
    assert usage == [9, 19, 26]
    said = [e["ts"] for e in events if e["type"] == "message"]
    assert said[0] == "2026-12-02T13:41:24.242526Z" and said == sorted(said)
    assert said[-1] == "2026-12-02T13:41:24.334579Z"


def test_a_persons_answer_is_a_resume_and_tools_recorded_by_agentchat_pair() -> None:
    events = events_of("agentchat_tools.json", "agentchat")
    resumes = [e["feedback"] for e in events if e["type"] == "resume"]
    assert resumes == ["No, thank you."]
    assert [e["type"] for e in events].count("interrupt") == 1
    failing = [e for e in events if e["type"] == "tool_result" and e["is_error"]]
    assert [e["content"] for e in failing] == ["division by zero"]
    assert "interrupt: ALWAYS" in events[0]["flow"]["text"]


def test_a_save_state_gives_the_same_conversation_as_the_task_result() -> None:
    state = messages(events_of("agentchat_state.json", "agentchat"))
    assert state == messages(events_of("agentchat_selector.json", "agentchat"))
