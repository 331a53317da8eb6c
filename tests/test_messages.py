"""The messages a model is sent and answers with: tool call ids of their own, usage sums, JSON."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from roost.messages import ToolCall, Usage, UserMessage, distinct_ids


def test_calls_of_one_answer_sharing_an_id_get_one_each_the_same_every_time() -> None:
    calls = (ToolCall(id="a", name="f"), ToolCall(id="a", name="g"), ToolCall(id="a_2", name="h"))
    ids = [call.id for call in distinct_ids(calls)]
    assert ids == ["a", "a_3", "a_2"]  # a_2 is taken by the answer itself
    assert [call.id for call in distinct_ids(calls)] == ids
    assert [call.name for call in distinct_ids(calls)] == ["f", "g", "h"]


def test_calls_with_ids_of_their_own_are_given_back_as_they_are() -> None:
    calls = (ToolCall(id="a", name="f"), ToolCall(id="b", name="f"))
    assert distinct_ids(calls) is calls
    unnamed = (ToolCall(id="", name="f"), ToolCall(id="", name="f"))
    assert [call.id for call in distinct_ids(unnamed)] == ["", "call_2"]


def test_usage_adds_up_every_count_and_the_calls() -> None:
    total = Usage(prompt_tokens=10, completion_tokens=2, cached_tokens=4, reasoning_tokens=1) + (
        Usage(prompt_tokens=5, completion_tokens=3, calls=2)
    )
    assert total == Usage(
        prompt_tokens=15, completion_tokens=5, cached_tokens=4, reasoning_tokens=1, calls=3
    )


def test_a_user_message_without_images_is_written_as_before_images_were() -> None:
    assert UserMessage(content="hi").model_dump_json() == '{"role":"user","content":"hi"}'


def test_messages_are_frozen_and_take_no_unknown_field() -> None:
    with pytest.raises(ValidationError):
        UserMessage(content="hi", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        UserMessage(content="hi").content = "bye"  # type: ignore[misc]
