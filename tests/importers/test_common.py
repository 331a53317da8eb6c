"""What the importers share: a tool call's arguments and a message's content read as roost's,
and replies built from tool rounds and their results."""

from __future__ import annotations

import pytest

from roost.importers.common import TurnBuilder, arguments_of, expect_list, text_of
from roost.importers.model import ImportFormatError, ToolCall


def test_arguments_are_an_object_whatever_the_engine_wrote() -> None:
    assert arguments_of({"a": 1}) == {"a": 1}
    assert arguments_of('{"a": 1}') == {"a": 1}
    assert arguments_of("[1, 2]") == {"value": [1, 2]}
    assert arguments_of("not json") == {"text": "not json"}
    assert arguments_of("  ") == arguments_of(None) == {}


def test_content_is_text_parts_joined_anything_else_json() -> None:
    assert text_of(None) == ""
    assert text_of("Hi") == "Hi"
    assert text_of(["one", {"type": "text", "text": "two"}]) == "one\ntwo"
    assert text_of([{"type": "image"}]) == '[{"type": "image"}]'  # a part with no text
    assert text_of({"é": 1}) == '{"é": 1}'


def test_results_reach_their_calls_and_a_round_left_without_text_is_noted() -> None:
    notes: list[str] = []
    build = TurnBuilder(notes)
    build.tool_round("bot", [ToolCall("c1", "add", {"a": 1}), ToolCall("c2", "div", {})])
    build.results("msg 2", [("c2", "division by zero", True), ("c1", "2", False)])
    build.tool_round("other", [ToolCall("c3", "add", {})])  # bot's round ends with no text
    build.say("other", "Done.")
    first, second = build.done()
    assert (first.speaker, first.content) == ("bot", "")
    [step] = first.steps
    assert [(c.id, c.result, c.is_error) for c in step.tool_calls] == [
        ("c1", "2", False), ("c2", "division by zero", True),
    ]  # fmt: skip
    assert (second.speaker, second.content, len(second.steps)) == ("other", "Done.", 1)
    assert notes == ["a tool round with no reply after it: its reply is recorded as empty text"]


def test_a_result_naming_no_call_or_a_shape_that_is_wrong_is_refused() -> None:
    build = TurnBuilder([])
    build.tool_round("bot", [ToolCall("c1", "add", {})])
    with pytest.raises(ImportFormatError, match=r"^msg 3: tool result for 'c9' names no call$"):
        build.results("msg 3", [("c9", "4", False)])
    with pytest.raises(ImportFormatError, match=r"^log.json: expected messages, found dict$"):
        expect_list({}, "log.json", "messages")
