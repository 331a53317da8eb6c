"""What an agent's functions entries name: one resolver, its precedence and its two texts."""

from __future__ import annotations

from typing import Any

import pytest

from roost.flow.models import Flow, McpTool, PythonTool, ToolGroup
from roost.flow.tool_refs import Target, UnresolvedReference, resolve_reference
from tests.flow.conftest import load, problems


def flow_of(data: dict[str, Any]) -> Flow:
    """A flow as the language reads it (nothing it names is imported or started)."""
    return Flow.model_validate({"roost": 1, "name": "refs", "agents": {"a": {}}, **data})


FLOW = flow_of(
    {
        "tools": {
            "math": {"tools": {"add": {"python": "m:add"}, "files": {"mcp": "fs"}}},
            "lookup": {"python": "m:loud", "description": "Shout"},
            "web": {"mcp": "browser", "timeout": 5},
        },
        "mcp_servers": {"fs": {"command": "fs"}, "browser": {"command": "b"}},
        "memory": {"scope": "flow"},
    }
)


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("@@lookup", [("entry", "lookup", None)]),
        ("math", [("entry", "math#add", None), ("mcp", "math#files", None)]),
        ("math#add", [("entry", "math#add", None)]),
        ("web#open", [("mcp", "web", "open")]),
        ("web", [("mcp", "web", None)]),
        ("browser#open", [("mcp", "browser", "open")]),
        ("memory#recall", [("memory", "memory#recall", "recall")]),
        ("builtin#read_file", [("builtin", "builtin#read_file", "read_file")]),
    ],
)
def test_what_a_reference_names(
    reference: str, expected: list[tuple[str, str, str | None]]
) -> None:
    found = resolve_reference(FLOW, reference)
    assert [(t.kind, t.name, t.tool) for t in found] == expected


def test_a_server_named_directly_gets_the_settings_of_the_entry_exposing_it() -> None:
    [target] = resolve_reference(FLOW, "browser#open")
    assert isinstance(target, Target) and target.config is FLOW.tools["web"]


@pytest.mark.parametrize(
    ("reference", "text", "checked"),
    [
        ("nothing", "unknown tool 'nothing'", "no tool named 'nothing' under tools"),
        ("math#mul", "tool group 'math' has no tool 'mul'", "tool group 'math' has no tool 'mul'"),
        ("lookup#x", "tool 'lookup' is not a group", "is neither a group nor an MCP tool"),
        ("fs#", "'fs#' names no tool: write fs#TOOL", "'fs#' names no tool: write fs#TOOL"),
        ("memory#keep", "there is no memory tool 'memory#keep'", "is no memory tool"),
        (
            "builtin#reed_file",
            "no built-in tool 'builtin#reed_file'",
            "(did you mean 'read_file'?)",
        ),
        ("nope#x", "unknown tool 'nope#x'", "no tool group or MCP tool named 'nope'"),
    ],
)
def test_a_reference_naming_nothing_says_so_to_a_run_and_to_the_check(
    reference: str, text: str, checked: str
) -> None:
    with pytest.raises(UnresolvedReference) as caught:
        resolve_reference(FLOW, reference)
    assert text in str(caught.value)
    assert checked in caught.value.checked


def test_a_tool_entry_comes_before_a_server_and_roosts_own_tools() -> None:
    flow = flow_of(
        {
            "tools": {"fs": {"python": "m:f"}, "memory": {"python": "m:g"}},
            "mcp_servers": {"fs": {"command": "fs"}},
            "memory": {"scope": "flow"},
        }
    )
    assert [t.name for t in resolve_reference(flow, "memory")] == ["memory"]
    with pytest.raises(UnresolvedReference, match="'fs' is not a group"):
        resolve_reference(flow, "fs#read")


def test_memory_tools_need_a_memory_section() -> None:
    with pytest.raises(UnresolvedReference) as caught:
        resolve_reference(flow_of({}), "memory#recall")
    assert "needs a memory: section" in caught.value.checked


def test_mcp_and_group_references_resolve() -> None:
    flow = load(
        """\
        roost: 1
        name: tools
        defaults: {provider: p}
        providers: {p: {kind: scripted}}
        mcp_servers:
          files: {command: mcp-files, args: [--root, .]}
          web: {url: "http://127.0.0.1:9/mcp"}
        tools:
          fs: {mcp: files}
          remote: {mcp: web}
          math: {tools: {add: {python: "m:add"}}}
        agents:
          a: {functions: [fs, "fs#read", "@@remote", "@@math", "math#add", "remote#get"]}
        """
    )
    assert isinstance(flow.tools["fs"], McpTool)
    assert isinstance(flow.tools["math"], ToolGroup)
    assert isinstance(flow.tools["math"].tools["add"], PythonTool)


def test_a_server_is_referenced_as_server_hash_tool() -> None:
    # Section 1: the tools of a server under mcp_servers are referenced as SERVER#tool.
    text = """\
        roost: 1
        name: tools
        defaults: {provider: p}
        providers: {p: {kind: scripted}}
        mcp_servers: {files: {command: x}}
        agents:
          a: {functions: ["files#read", "files#"]}
        """
    assert problems(text) == ["flow.yaml:7:33: error: 'files#' names no tool: write files#TOOL"]
