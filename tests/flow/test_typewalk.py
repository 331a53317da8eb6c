"""A pydantic error's location, walked through the flow models: union tags told from keys."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from roost.flow.models import Flow, OpenAIProviderConfig, PythonTool, Start
from roost.flow.typewalk import Segment, describe_type, field_type, model_keys, walk


def test_a_union_tag_in_a_location_is_told_from_the_keys_around_it() -> None:
    segments, found = walk(Flow, ("providers", "gpt", "openai", "max_tokens"))
    assert segments == [
        Segment("providers", False),
        Segment("gpt", False),
        Segment("openai", True),  # the discriminator's value pydantic puts in the location
        Segment("max_tokens", False),
    ]
    assert found is int
    segments, found = walk(Flow, ("tools", "lookup", "PythonTool", "python"))
    assert [s.is_tag for s in segments] == [False, False, True, False]
    assert found is str


def test_a_model_s_keys_are_written_as_the_flow_writes_them() -> None:
    assert "from" in model_keys(Start) and "from_" not in model_keys(Start)
    assert field_type(Start, "from") is str and field_type(Start, "nothing") is None
    assert "python" in model_keys(PythonTool)
    assert walk(Flow, ("providers", "gpt", "openai"))[1] is OpenAIProviderConfig


@pytest.mark.parametrize(
    ("tp", "words"),
    [
        (str, "a string"),
        (int | None, "an integer"),
        (float, "a number"),
        (bool, "true or false"),
        (list[str], "a list"),
        (dict[str, Any], "a mapping"),
        (Start, "a mapping"),
        (Literal["stop", "ask"], "one of stop, ask"),
        (bytes, "a value of another type"),
    ],
)
def test_a_type_is_described_as_what_to_write(tp: Any, words: str) -> None:
    assert describe_type(tp) == words
