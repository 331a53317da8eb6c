"""OpenTelemetry GenAI spans written by another engine, read as a conversation."""

from __future__ import annotations

from tests.importers.conftest import events_of, messages


def test_otel_spans_of_another_engine_give_speakers_roles_and_models() -> None:
    events = events_of("otel_ag2.json", "otel")
    assert [m[0] for m in messages(events)] == ["user", "guide", "user", "guide"]
    assert "You answer briefly." in events[0]["flow"]["text"]
    models = {e["model"] for e in events if e["type"] == "llm_call" and e["node"] == "guide"}
    assert models == {"list-model"}
