"""A tool's declared parameters: arguments checked against them before the call."""

from __future__ import annotations

import pytest

from roost.tools import ToolOutcome
from roost.tools.arguments import InvalidSchema

from .conftest import tool

LOOKUP = {
    "type": "object",
    "properties": {"value": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
    "required": ["value"],
}


async def test_a_declared_schema_is_enforced_before_the_call() -> None:
    untyped = tool("tools_mod:untyped", parameters=LOOKUP)
    assert (await untyped.call({"value": "a", "count": 2})).content == '["a","a"]'
    wrong = await untyped.call({"value": 5})
    assert wrong == ToolOutcome(
        "invalid arguments for tools_mod_untyped: value: 5 is not of type 'string'", is_error=True
    )
    missing = await untyped.call({"count": 0})
    assert missing.is_error and "\n" not in missing.content
    assert missing.content.endswith(
        ": count: 0 is less than the minimum of 1; 'value' is a required property"
    )


async def test_a_long_value_does_not_hide_what_is_wrong() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "string", "maxLength": 3}}}
    outcome = await tool("tools_mod:untyped", parameters=schema).call({"value": "x" * 500})
    assert outcome == ToolOutcome(
        "invalid arguments for tools_mod_untyped: value: does not fit 'maxLength': 3",
        is_error=True,
    )


def test_a_declared_schema_that_is_not_json_schema_is_refused() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "text"}}}
    with pytest.raises(InvalidSchema) as caught:
        tool("tools_mod:untyped", parameters=schema)
    assert str(caught.value) == (
        "tool 'tools_mod:untyped': parameters is not a valid JSON Schema: "
        "properties.value.type: 'text' is not valid under any of the given schemas"
    )


async def test_a_schema_whose_ref_cannot_be_followed_is_an_error_result() -> None:
    far = {"type": "object", "properties": {"value": {"$ref": "https://example.invalid/s.json"}}}
    outcome = await tool("tools_mod:untyped", parameters=far).call({"value": "a"})
    assert outcome.is_error
    assert outcome.content.startswith("cannot check the arguments of tools_mod_untyped: ")
