"""The toolbox: references, groups, wire names, tool_limit ranking and load-time checks."""

from __future__ import annotations

import pytest

from roost.errors import ToolFailure
from roost.tools import check_flow_tools, parse_ref, toolbox_for
from roost.tools.names import WIRE_NAME

from .conftest import make_flow


def math_flow(**agent: object) -> object:
    return make_flow(
        {
            "tools": {
                "math": {
                    "description": "Arithmetic",
                    "tools": {
                        "add": {"python": "tools_mod:add"},
                        "sub": {"python": "tools_mod:only_positional", "description": "Subtract"},
                    },
                },
                "lookup": {"python": "tools_mod:loud", "description": "Shout a word"},
            },
            "agents": {"a": {"functions": ["math#add", "@@lookup"], **agent}, "b": {}},
        }
    )


def test_references_resolve_to_wire_named_tools() -> None:
    toolbox = toolbox_for(math_flow())
    tools = toolbox("a", "hello")
    assert [t.spec.name for t in tools] == ["math__add", "lookup"]
    assert tools[1].spec.description == "Shout a word"
    assert toolbox("b", "") == []
    assert toolbox("nobody", "") == []


def test_a_bare_group_offers_all_its_children_once() -> None:
    flow = math_flow()
    flow.agents["a"].functions[:] = ["math", "math#add", "@@math#sub"]
    assert [t.spec.name for t in toolbox_for(flow)("a", "")] == ["math__add", "math__sub"]


async def test_group_child_runs() -> None:
    add = toolbox_for(math_flow())("a", "")[0]
    assert (await add.call({"a": 1, "b": 1})).content == "2"


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("nothing", "unknown tool 'nothing'"),
        ("math#mul", "tool group 'math' has no tool 'mul'"),
        ("lookup#x", "tool 'lookup' is not a group"),
    ],
)
def test_bad_references(reference: str, message: str) -> None:
    flow = math_flow()
    flow.agents["a"].functions[:] = [reference]
    with pytest.raises(ToolFailure, match=message):
        toolbox_for(flow)("a", "")


def test_parse_ref() -> None:
    assert parse_ref("@@math#add").text == "math#add"
    assert parse_ref("lookup").child is None


def test_colliding_wire_names_are_kept_apart() -> None:
    flow = make_flow(
        {
            "tools": {
                "a_b": {"python": "tools_mod:add"},
                "a.b": {"python": "tools_mod:add"},
            },
            "agents": {"x": {"functions": ["a_b", "a.b"]}},
        }
    )
    names = [t.spec.name for t in toolbox_for(flow)("x", "")]
    assert names[0] == "a_b" and names[1] != "a_b" and WIRE_NAME.match(names[1])


def test_tool_limit_offers_best_matches_in_declared_order() -> None:
    tools = {
        "weather": {"python": "tools_mod:loud", "description": "Weather forecast for a city"},
        "add": {"python": "tools_mod:add"},
        "point": {"python": "tools_mod:point"},
        "echo": {"python": "tools_mod:slow_echo"},
    }
    flow = make_flow({"tools": tools, "agents": {"a": {"functions": list(tools), "tool_limit": 2}}})
    toolbox = toolbox_for(flow)
    assert [t.spec.name for t in toolbox("a", "please echo the forecast")] == ["weather", "echo"]
    assert [t.spec.name for t in toolbox("a", "add 2 and 3 to make a point")] == ["add", "point"]
    assert len(toolbox.agent_tools("a")) == 4


def test_check_flow_tools_reports_each_broken_python_tool() -> None:
    flow = make_flow(
        {
            "tools": {
                "ok": {"python": "tools_mod:add"},
                "missing": {"python": "no_such_mod:f"},
                "grp": {"tools": {"bad": {"python": "tools_mod:NOT_CALLABLE"}}},
                "opaque": {"python": "tools_mod:takes_opaque"},
            }
        }
    )
    problems = check_flow_tools(flow)
    messages = sorted(p.message for p in problems)
    assert len(messages) == 3
    assert messages[0].startswith("tool 'grp#bad': ") and "is not callable" in messages[0]
    assert messages[1].startswith("tool 'missing': cannot import 'no_such_mod'")
    assert messages[2].startswith("tool 'opaque': parameter 'thing'")
    assert all(p.file.endswith("flow.yaml") and p.severity == "error" for p in problems)
