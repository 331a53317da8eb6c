"""An ``llm_call``'s records are typed, keep what a newer roost adds and refuse a wrong shape."""

from __future__ import annotations

import pytest

from roost.events import (
    LlmAttempt,
    LlmCallEvent,
    LlmResponse,
    LlmUsage,
    RecordedReasoning,
    RecordedToolCall,
    event_json,
    parse_event,
)
from tests.events.conftest import lines


def test_the_records_are_typed() -> None:
    calls = [
        e for e in map(parse_event, lines("fallback_run.jsonl")) if isinstance(e, LlmCallEvent)
    ]
    first = calls[0]
    assert isinstance(first.response, LlmResponse) and isinstance(first.usage, LlmUsage)
    assert first.response.tool_calls == (
        RecordedToolCall(id="c1", name="add", arguments={"a": 2, "b": 3}),
    )
    assert isinstance(first.response.reasoning[0], RecordedReasoning)
    assert first.response.reasoning[0].signature == "S"
    assert first.usage.prompt_tokens == 30 and first.usage.cached_tokens == 4
    assert [(a.provider, a.outcome, a.status) for a in first.attempts] == [
        ("flaky", "http 500", 500),
        ("claude", "ok", 200),
    ]
    cut = calls[2].response
    assert cut is not None and cut.cut and cut.finish_reason == "max_tokens" and not cut.refused
    failed = calls[3]
    assert failed.response is None and failed.usage is None and failed.error


def test_fields_a_newer_roost_adds_are_kept() -> None:
    line = next(line for line in lines("fallback_run.jsonl") if '"cut":true' in line)
    newer = line.replace('"cut":true', '"cut":true,"effort":"high"').replace(
        '"calls":1}', '"calls":1,"audio_tokens":5}'
    )
    event = parse_event(newer)
    assert isinstance(event, LlmCallEvent) and event.response and event.usage
    assert event.response.model_extra == {"effort": "high"}
    assert event.usage.model_extra == {"audio_tokens": 5}
    assert event_json(event) == newer


def test_attempts_with_an_unknown_shape_are_refused_on_load() -> None:
    line = next(line for line in lines("fallback_run.jsonl") if '"attempts":[{' in line)
    broken = line.replace('"outcome":"http 500",', "", 1)
    with pytest.raises(ValueError, match="outcome"):
        parse_event(broken)
    assert LlmAttempt(provider="p", model="m", outcome="ok").model_dump() == {
        "provider": "p",
        "model": "m",
        "outcome": "ok",
    }
