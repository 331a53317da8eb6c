"""Python tools through the Tool objects: schemas, validation, sync/async, errors, results."""

from __future__ import annotations

import asyncio
import json

import pytest

from roost.errors import ToolFailure
from roost.tools import Tool, ToolOutcome

from .conftest import DATA, tool


def test_schema_from_hints_and_docstring() -> None:
    add = tool("tools_mod:add")
    assert isinstance(add, Tool)
    assert add.spec.description == "Add two integers."
    params = add.spec.parameters
    assert params["type"] == "object"
    assert params["required"] == ["a"]
    assert params["properties"]["a"] == {"type": "integer", "description": "The first number."}
    assert params["properties"]["b"]["default"] == 2
    assert params["additionalProperties"] is False


def test_literal_becomes_enum() -> None:
    params = tool("tools_mod:point").spec.parameters
    assert params["properties"]["unit"]["enum"] == ["cm", "m"]


def test_given_parameters_and_description_win() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    add = tool("tools_mod:add", description="Adds.", parameters=schema)
    assert add.spec.parameters == schema
    assert add.spec.description == "Adds."


async def test_sync_call_and_coercion() -> None:
    add = tool("tools_mod:add")
    assert await add.call({"a": 2, "b": 3}) == ToolOutcome("5")
    assert await add.call({"a": "40"}) == ToolOutcome("42")  # lax JSON coercion, default b


async def test_invalid_arguments_name_the_argument() -> None:
    add = tool("tools_mod:add")
    bad = await add.call({"a": "x"})
    assert bad.is_error
    assert "a: Input should be a valid integer" in bad.content and "'x'" in bad.content
    missing = await add.call({})
    assert missing.is_error and "a: Field required" in missing.content
    extra = await add.call({"a": 1, "c": 3})
    assert extra.is_error and "c: Extra inputs are not permitted" in extra.content


async def test_raising_tool_is_an_error_outcome() -> None:
    outcome = await tool("tools_mod:fail").call({"reason": "no luck"})
    assert outcome == ToolOutcome("ValueError: no luck", is_error=True)


@pytest.mark.parametrize(
    ("target", "arguments", "expected"),
    [
        ("tools_mod:exits", {}, "tools_mod_exits exited (sys.exit(7))"),
        ("tools_mod:exits", {"code": None}, "tools_mod_exits exited (sys.exit())"),
        ("tools_mod:exits", {"code": "bye"}, "tools_mod_exits exited (sys.exit('bye'))"),
        ("tools_mod:exits_async", {}, "tools_mod_exits_async exited (sys.exit(3))"),
        ("tools_mod:closes", {}, "GeneratorExit: closed by the tool"),
    ],
)
async def test_a_tool_that_exits_is_an_error_outcome(
    target: str, arguments: dict[str, object], expected: str
) -> None:
    outcome = await tool(target).call(arguments)
    assert outcome == ToolOutcome(expected, is_error=True)


async def test_cancelling_a_call_still_cancels_it() -> None:
    call = asyncio.ensure_future(tool("tools_mod:slow_echo").call({"text": "x", "delay": 30}))
    await asyncio.sleep(0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_a_declared_schema_and_type_hints_both_hold() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "maximum": 9}}}
    add = tool("tools_mod:add", parameters=schema)
    assert (await add.call({"a": 4})).content == "6"
    too_big = await add.call({"a": 10})
    assert too_big.is_error and "a: 10 is greater than the maximum of 9" in too_big.content
    unhinted = await add.call({"a": 1, "b": "x"})  # the schema allows b, the hint does not
    assert unhinted.is_error and "b: Input should be a valid integer" in unhinted.content


async def test_non_string_results_are_json() -> None:
    outcome = await tool("tools_mod:point").call({"x": 1, "y": 2})
    assert json.loads(outcome.content) == {"point": {"x": 1, "y": 2}, "unit": "m"}
    assert (await tool("tools_mod:nothing").call({})).content == "null"
    assert (await tool("tools_mod:untyped").call({"value": "a", "count": 2})).content == '["a","a"]'


async def test_async_and_sync_calls_overlap() -> None:
    meet_async, meet = tool("tools_mod:meet_async"), tool("tools_mod:meet")
    # Each call returns only once all three are running at the same time.
    outcomes = await asyncio.gather(
        meet_async.call({"group": "python-overlap", "parties": 3}),
        meet.call({"group": "python-overlap", "parties": 3}),
        meet.call({"group": "python-overlap", "parties": 3}),
    )
    assert [o.is_error for o in outcomes] == [False, False, False], outcomes
    assert outcomes[0].content == "met python-overlap"
    assert outcomes[1].content == outcomes[2].content == "met python-overlap in roost-tool"


async def test_positional_only_and_var_keyword() -> None:
    assert (await tool("tools_mod:only_positional").call({"a": 5, "b": 2})).content == "3"
    outcome = await tool("tools_mod:with_kwargs").call({"name": "n", "x": 1})
    assert outcome.content == "n:[('x', 1)]"


async def test_module_sees_its_sibling_modules() -> None:
    assert (await tool("tools_mod:loud").call({"word": "hi"})).content == "HI!"


async def test_same_module_name_in_two_folders_stays_apart() -> None:
    here = tool("tools_mod:add")
    there = tool("tools_mod:add", folder=DATA / "other")
    assert (await here.call({"a": 5, "b": 1})).content == "6"
    assert (await there.call({"a": 5, "b": 1})).content == "4"


async def test_module_from_sys_path() -> None:
    dumps = tool("json:dumps", parameters={"type": "object", "properties": {"obj": {}}})
    assert (await dumps.call({"obj": [1]})).content == "[1]"


def test_options_are_carried() -> None:
    add = tool("tools_mod:add", direct_output=True, approval="always", timeout=5)
    assert (add.direct_output, add.approval, add.timeout) == (True, True, 5)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("no_such_module:f", "cannot import 'no_such_module'"),
        ("tools_mod:missing", "module 'tools_mod' has no attribute 'missing'"),
        ("tools_mod:NOT_CALLABLE", "is not callable"),
        ("broken_mod:f", "RuntimeError: this module is broken on purpose"),
        ("exiting_mod:f", r"importing 'exiting_mod' failed: it called sys.exit\(3\)"),
        (
            "tools_mod:takes_opaque",
            r"parameter 'thing' has a type that cannot be described as JSON Schema \(Opaque\)",
        ),
    ],
)
def test_load_failures_say_what_is_wrong(target: str, expected: str) -> None:
    with pytest.raises(ToolFailure, match=expected):
        tool(target)


async def test_undescribable_parameters_are_fine_with_a_given_schema() -> None:
    schema = {"type": "object", "properties": {"thing": {}}, "required": ["thing"]}
    opaque = tool("tools_mod:takes_opaque", parameters=schema)
    assert (await opaque.call({})).is_error
    assert (await opaque.call({"thing": 1})).content == "never"


async def test_parameters_named_like_model_attributes() -> None:
    odd = tool("tools_mod:odd_names")
    assert set(odd.spec.parameters["properties"]) == {"json", "schema", "model_config", "_hidden"}
    assert odd.spec.parameters["required"] == ["json"]
    outcome = await odd.call({"json": True, "model_config": 3})
    assert outcome == ToolOutcome("True s 3 1")
    bad = await odd.call({"json": "maybe", "p0": True})
    assert bad.is_error and "json:" in bad.content and "p0: Extra inputs" in bad.content
