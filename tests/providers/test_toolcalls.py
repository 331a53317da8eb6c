"""Joining streamed tool-call fragments, whatever the server's habits."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from roost.messages import ToolCall
from roost.providers._toolcalls import ToolCallAccumulator, arguments_text, parse_arguments


def test_openai_style_fragments() -> None:
    acc = ToolCallAccumulator()
    acc.add(0, "a", "add", "")
    acc.add(1, "b", "mul", "")
    acc.add(0, None, None, '{"x"')
    acc.add(1, None, None, '{"y": 2}')
    acc.add(0, None, None, ": 1}")
    assert [(c.id, c.name, c.arguments) for c in acc.calls()] == [
        ("a", "add", {"x": 1}),
        ("b", "mul", {"y": 2}),
    ]


def test_reused_index_with_new_ids_starts_new_calls() -> None:
    acc = ToolCallAccumulator()
    acc.add(0, "a", "add", '{"x": 1}')
    acc.add(0, "b", "add", '{"x": 2}')
    acc.add(0, "b", "add", "")  # a repeated id continues the same call
    assert [c.arguments for c in acc.calls()] == [{"x": 1}, {"x": 2}]


def test_two_indexes_under_one_id_are_two_calls() -> None:
    # A server numbering two calls alike: each index keeps its own arguments.
    acc = ToolCallAccumulator()
    acc.add(0, "call_1", "add", "")
    acc.add(1, "call_1", "add", "")
    acc.add(0, None, None, '{"x": 1}')
    acc.add(1, None, None, '{"x": 2}')
    assert [(c.id, c.arguments) for c in acc.calls()] == [
        ("call_1", {"x": 1}),
        ("call_1", {"x": 2}),
    ]


def test_missing_ids_and_indexes_are_made_up() -> None:
    acc = ToolCallAccumulator()
    acc.add(None, None, "ping", "")
    (call,) = acc.calls()
    assert call.id == "call_0" and call.arguments == {}


def test_invalid_arguments_are_kept_raw() -> None:
    assert parse_arguments("[1, 2]") == ({}, "[1, 2]")
    assert parse_arguments("{bad") == ({}, "{bad")
    assert parse_arguments("  ") == ({}, None)
    raw = ToolCall(id="1", name="f", raw_arguments="{bad")
    assert arguments_text(raw) == "{bad"
    assert json.loads(arguments_text(ToolCall(id="1", name="f", arguments={"a": "é"}))) == {
        "a": "é"
    }


arguments = st.dictionaries(
    st.text(min_size=1, max_size=5), st.integers() | st.text(max_size=8), max_size=4
)


@settings(max_examples=60, deadline=None)
@given(st.lists(arguments, min_size=1, max_size=4), st.integers(1, 7), st.booleans(), st.booleans())
def test_any_fragmentation_gives_back_the_calls(
    calls: list[dict[str, object]], size: int, repeat_ids: bool, reuse_index: bool
) -> None:
    acc = ToolCallAccumulator()
    for n, args in enumerate(calls):
        text = json.dumps(args)
        index = 0 if reuse_index else n
        acc.add(index, f"id{n}", "tool", "")
        for start in range(0, len(text), size):
            call_id = f"id{n}" if repeat_ids else None
            acc.add(index, call_id, "tool" if repeat_ids else None, text[start : start + size])
    assert [(c.id, c.name, c.arguments) for c in acc.calls()] == [
        (f"id{n}", "tool", args) for n, args in enumerate(calls)
    ]
