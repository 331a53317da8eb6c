"""What an ``llm_call`` event records of a model's answer: its text, calls and reasoning,
how it ended, its usage and the provider's attempts; and the answer read back from one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.engine.recorder import build_event, build_whole
from roost.events import (
    LlmAttempt,
    LlmCallEvent,
    LlmResponse,
    LlmUsage,
    RecordedReasoning,
    RecordedToolCall,
)
from roost.messages import ModelResponse, ToolCall, distinct_ids
from roost.runstate import assistant_message

if TYPE_CHECKING:
    from collections.abc import Sequence


def recorded_response(call: LlmCallEvent) -> ModelResponse:
    """The text answer an ``llm_call`` event records, as the provider gave it."""
    message = assistant_message(call.response or LlmResponse(), call.provider, with_calls=False)
    finish = finish_of(call.response)
    return ModelResponse(message=message, model=call.model, provider=call.provider, **finish)


def response_record(response: ModelResponse, *, keep_calls: bool) -> LlmResponse:
    """The ``response`` field of an llm_call: text, tool calls and reasoning, how it ended.

    Both are frozen, so an answer handed out again at once (a scripted provider's
    repeated reply) gets the record made the first time.
    """
    global _last
    answer, kept, record = _last
    if answer is response and kept == keep_calls:
        return record
    record = _response_record(response, keep_calls)
    _last = (response, keep_calls, record)  # the answer held, so its record stays its own
    return record


_last: tuple[ModelResponse | None, bool, LlmResponse] = (None, False, LlmResponse())


def _response_record(response: ModelResponse, keep_calls: bool) -> LlmResponse:
    message = response.message
    # Recorded with an id each, so each call is asked about, run and recorded on its own.
    calls, reasoning = distinct_ids(message.tool_calls), message.reasoning
    # Built without validating again (the values come from a validated ModelResponse),
    # every field written out: this runs once per model call. Most answers have neither
    # calls nor reasoning; tuples, as in every event: an answer without them then holds
    # no container, so neither it nor its event is left for the garbage collector to track.
    return build_whole(
        LlmResponse,
        {
            "text": message.content,
            "tool_calls": tuple(_call_record(c) for c in calls) if calls and keep_calls else (),
            "reasoning": tuple(
                build_event(RecordedReasoning, part.model_dump(exclude_none=True))
                for part in reasoning
            )
            if reasoning
            else (),
            "finish_reason": response.finish_reason,
            # Written only when they say something: most answers end by themselves.
            "cut": response.cut,
            "refused": response.refused,
            "notes": tuple(response.notes),
        },
    )


def finish_of(response: LlmResponse | None) -> dict[str, Any]:
    """The finish fields of a recorded ``response``, as ``ModelResponse`` takes them."""
    if response is None:
        return {}
    return {
        "finish_reason": response.finish_reason,
        "cut": response.cut,
        "refused": response.refused,
    }


def _call_record(call: ToolCall) -> RecordedToolCall:
    record: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.raw_arguments is not None:
        record["raw_arguments"] = call.raw_arguments
    if call.provider_details is not None:
        record["provider_details"] = call.provider_details
    return build_event(RecordedToolCall, record)


def usage_record(response: ModelResponse) -> LlmUsage:
    """Token counts of the call (zeros when the provider counted none, as scripted ones)."""
    usage = response.usage
    key = (
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_tokens,
        usage.reasoning_tokens,
    )
    record = _USAGES.get(key)
    if record is None:
        # Records are frozen: calls that used the same tokens share one (every scripted call).
        if len(_USAGES) >= 256:
            _USAGES.clear()
        prompt, completion, cached, reasoning = key
        fields = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached_tokens": cached,
            "reasoning_tokens": reasoning,
            "calls": 1,
        }
        record = _USAGES[key] = build_whole(LlmUsage, fields)
    return record


_USAGES: dict[tuple[int, int, int, int], LlmUsage] = {}


def attempt_records(attempts: Sequence[dict[str, Any]]) -> tuple[LlmAttempt, ...]:
    """The attempts a provider reports (provider, model, outcome, status), as records."""
    if not attempts:  # a scripted provider reports none
        return ()
    return tuple(LlmAttempt.model_validate(attempt) for attempt in attempts)
