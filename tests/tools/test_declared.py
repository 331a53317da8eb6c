"""A replay's declared tools are the live toolbox's: the same names, in the same order,
with the same settings, worked out without importing or starting anything."""

from __future__ import annotations

from roost.tools import toolbox_for
from roost.tools.declared import declared_skill_read, declared_tools

from .conftest import make_flow

FLOW = {
    "tools": {
        "math": {
            "tools": {
                "add": {"python": "tools_mod:add", "description": "Add", "approval": "always"},
                "loud": {"python": "tools_mod:loud", "description": "Shout", "timeout": 3},
            }
        },
        "point": {"python": "tools_mod:point", "description": "A point", "direct_output": True},
    },
    "memory": {"scope": "flow"},
    "builtins": {"shell": {"approval": "never", "timeout": 7}},
    "agents": {
        "a": {
            "functions": ["math", "@@point", "math#add", "memory#recall", "builtin#shell"],
        }
    },
}


def settings(tool: object) -> tuple[object, ...]:
    spec = tool.spec  # type: ignore[attr-defined]
    keep = (tool.approval, tool.direct_output, tool.timeout)  # type: ignore[attr-defined]
    return (spec.name, spec.description, *keep)


def test_declared_tools_are_named_and_set_as_the_toolbox_builds_them() -> None:
    flow = make_flow(FLOW)
    # A bank only for the memory tool to be built: nothing is called.
    live = toolbox_for(flow, memory=object()).agent_tools("a")  # type: ignore[arg-type]
    declared = declared_tools(flow, "a", [])
    assert [settings(t) for t in declared] == [settings(t) for t in live]
    assert [t.spec.name for t in declared] == [
        "math__add",
        "math__loud",
        "point",
        "memory__recall",
        "builtin__shell",
    ]


def test_skill_read_is_declared_as_the_toolbox_offers_it() -> None:
    flow = make_flow({"agents": {"a": {"skills": ["tea"]}}})
    [live] = toolbox_for(flow)._skill_tools("a")
    assert settings(declared_skill_read()) == settings(live)
