"""MCP tools against real servers written with the SDK: over stdio, streamable HTTP and SSE."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from typing import TYPE_CHECKING

import mcp_types
import pytest

from roost.engine import Runner
from roost.errors import ToolFailure
from roost.events import ToolResultEvent
from roost.flow.models import Flow, McpTool
from roost.loading import load_flow
from roost.ports import MemoryLog
from roost.testing import flow_from_yaml
from roost.tools import ToolOutcome, check_flow_tools, mcp_tool, toolbox_for
from roost.tools.mcp_tool import McpHub, McpServerTool

from .conftest import DATA, make_flow
from .mcp_http_server import running_http_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def stdio_flow(**agent: object) -> Flow:
    return make_flow(
        {
            "mcp_servers": {
                "calc": {"command": sys.executable, "args": ["mcp_stdio_server.py"]},
                "broken": {"command": sys.executable, "args": ["mcp_crash_server.py"]},
            },
            "tools": {"calc": {"mcp": "calc", "timeout": 20}, "broken": {"mcp": "broken"}},
            "agents": {"a": {"functions": ["calc#add", "calc#greet", "calc#explode"], **agent}},
        }
    )


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with running_http_server() as url:
        yield url


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with running_http_server("sse") as url:
        yield url


async def test_stdio_server_tools_are_listed_and_called() -> None:
    toolbox = toolbox_for(stdio_flow())
    try:
        tools = toolbox("a", "")
        assert [t.spec.name for t in tools] == ["calc__add", "calc__greet", "calc__explode"]
        add = tools[0]
        assert add.spec.description == "Add two integers on the server."
        assert add.spec.parameters["required"] == ["a", "b"]
        assert add.timeout == 20
        outcomes = await asyncio.gather(add.call({"a": 2, "b": 3}), tools[1].call({"name": "Ada"}))
        assert [o.content for o in outcomes] == ["5", "Hello, Ada!"]
        assert not any(o.is_error for o in outcomes)
        failed = await tools[2].call({"message": "kaboom"})
        assert failed.is_error and "kaboom" in failed.content
        invalid = await add.call({"a": "x", "b": 1})  # refused before it reaches the server
        assert invalid == ToolOutcome(
            "invalid arguments for calc__add: a: 'x' is not of type 'integer'", is_error=True
        )
    finally:
        await toolbox.aclose()


async def test_whole_server_and_listing_once() -> None:
    flow = stdio_flow()
    flow.agents["a"].functions[:] = ["calc"]
    toolbox = toolbox_for(flow)
    try:
        names = [t.spec.name for t in toolbox("a", "")]
        assert set(names) == {
            "calc__add",
            "calc__greet",
            "calc__explode",
            "calc__wait",
            "calc__pid",
        }
        assert toolbox("a", "") == toolbox("a", "")  # built once per toolbox
    finally:
        await toolbox.aclose()


async def test_calls_can_be_cancelled_by_a_timeout() -> None:
    flow = stdio_flow()
    flow.agents["a"].functions[:] = ["calc#wait", "calc#add"]
    toolbox = toolbox_for(flow)
    try:
        wait, add = toolbox("a", "")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(wait.call({"seconds": 5}), 0.3)
        assert (await add.call({"a": 1, "b": 1})).content == "2"  # the session lives on
    finally:
        await toolbox.aclose()


def test_a_server_that_fails_to_start_is_named() -> None:
    flow = stdio_flow()
    flow.agents["a"].functions[:] = ["broken#anything"]
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure) as caught:
            toolbox("a", "")
        message = str(caught.value)
        assert "MCP server 'broken'" in message and "failed to start" in message
        assert "cannot open the database" in message
    finally:
        toolbox.close()


def test_unknown_remote_tool() -> None:
    flow = stdio_flow()
    flow.agents["a"].functions[:] = ["calc#nope"]
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure, match="MCP server 'calc' has no tool 'nope'"):
            toolbox("a", "")
    finally:
        toolbox.close()


async def test_http_server(http_url: str) -> None:
    flow = make_flow(
        {
            "mcp_servers": {"weather": {"url": http_url, "headers": {"X-Roost-Test": "1"}}},
            "tools": {"weather": {"mcp": "weather"}},
            "agents": {"a": {"functions": ["weather"]}},
        }
    )
    toolbox = toolbox_for(flow)
    try:
        tools = {t.spec.name: t for t in toolbox("a", "")}
        assert set(tools) == {"weather__forecast", "weather__temperature", "weather__header"}
        outcomes = await asyncio.gather(
            tools["weather__forecast"].call({"city": "Oslo"}),
            tools["weather__temperature"].call({"city": "Rome"}),
        )
        assert outcomes[0].content == "Sunny in Oslo"
        assert json.loads(outcomes[1].content) == {"city": "Rome", "celsius": 21}
    finally:
        await toolbox.aclose()


async def test_sse_server(sse_url: str) -> None:
    flow = make_flow(
        {
            "mcp_servers": {
                "weather": {
                    "url": sse_url,
                    "transport": "sse",
                    "headers": {"Authorization": "Bearer sse-token-1234"},
                }
            },
            "tools": {"weather": {"mcp": "weather"}},
            "agents": {"a": {"functions": ["weather"]}},
        }
    )
    toolbox = toolbox_for(flow)
    try:
        tools = {t.spec.name: t for t in toolbox("a", "")}
        assert set(tools) == {"weather__forecast", "weather__temperature", "weather__header"}
        assert tools["weather__forecast"].spec.description == "The weather forecast for a city."
        outcomes = await asyncio.gather(
            tools["weather__forecast"].call({"city": "Oslo"}),
            tools["weather__temperature"].call({"city": "Rome"}),
            tools["weather__header"].call({"name": "authorization"}),
        )
        assert outcomes[0] == ToolOutcome("Sunny in Oslo")
        assert json.loads(outcomes[1].content) == {"city": "Rome", "celsius": 21}
        assert outcomes[2] == ToolOutcome("Bearer sse-token-1234")  # the headers reach it
        invalid = await tools["weather__forecast"].call({"city": 5})
        assert invalid.is_error and "invalid arguments for weather__forecast" in invalid.content
    finally:
        await toolbox.aclose()


async def test_an_sse_stream_gone_silent_makes_calls_error_results_not_hangs(
    sse_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK's server pings every 15 s; a silence allowed of 0.5 s ends the stream first.
    monkeypatch.setattr(mcp_tool, "SSE_SILENCE", 0.5)
    flow = make_flow(
        {
            "mcp_servers": {"weather": {"url": sse_url, "transport": "sse"}},
            "agents": {"a": {"functions": ["weather#forecast"]}},
        }
    )
    toolbox = toolbox_for(flow)
    try:
        (forecast,) = toolbox("a", "")
        assert await forecast.call({"city": "Oslo"}) == ToolOutcome("Sunny in Oslo")
        await asyncio.sleep(2)
        assert await forecast.call({"city": "Rome"}) == ToolOutcome(
            "MCPError: Connection closed", is_error=True
        )
    finally:
        await toolbox.aclose()


def test_an_sse_endpoint_is_not_reached_as_streamable_http(sse_url: str) -> None:
    """The transport is named in the flow: a wrong one fails to start, in one line."""
    flow = make_flow(
        {
            "mcp_servers": {"weather": {"url": sse_url, "timeout": 10}},
            "agents": {"a": {"functions": ["weather#forecast"]}},
        }
    )
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure) as caught:
            toolbox("a", "")
        message = str(caught.value)
        assert message.startswith(f"MCP server 'weather' ({sse_url}) failed to start: ")
        assert message.endswith("(if the server speaks sse, write transport: sse)")
        assert "\n" not in message
    finally:
        toolbox.close()


def with_secret_key(body: str) -> Flow:
    """A flow whose ``${KEY}`` is the secret ``s3cr3t-value``, read from its environment."""
    text = "roost: 1\nname: test\n" + textwrap.dedent(body)
    return flow_from_yaml(text, replies=["unused"], environ={"KEY": "s3cr3t-value"})


def test_an_sse_server_that_is_not_there() -> None:
    flow = with_secret_key(
        """
        mcp_servers:
          gone: {url: "http://127.0.0.1:9/sse?key=${KEY}", transport: sse}
        agents:
          a: {functions: ["gone#anything"]}
        """
    )
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure) as caught:
            toolbox("a", "")
        message = str(caught.value)
        assert message.startswith("MCP server 'gone' (http://127.0.0.1:9/sse?key=***)")
        assert "failed to start" in message and "s3cr3t-value" not in message
        assert "transport" not in message  # nothing answered: no other transport helps
    finally:
        toolbox.close()


def test_http_server_that_is_not_there() -> None:
    flow = make_flow(
        {
            "mcp_servers": {"gone": {"url": "http://127.0.0.1:9/mcp", "timeout": 10}},
            "tools": {"gone": {"mcp": "gone"}},
            "agents": {"a": {"functions": ["gone"]}},
        }
    )
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure, match="MCP server 'gone'"):
            toolbox("a", "")
    finally:
        toolbox.close()


def test_check_finds_missing_commands_and_servers() -> None:
    flow = make_flow(
        {
            "mcp_servers": {"nope": {"command": "roost-no-such-command-xyz"}},
            "tools": {"n": {"mcp": "nope"}, "m": {"mcp": "undeclared"}},
        }
    )
    messages = [p.message for p in check_flow_tools(flow)]
    assert "MCP server 'nope': command 'roost-no-such-command-xyz' not found" in messages
    assert "tool 'm': MCP server 'undeclared' is not declared under mcp_servers" in messages
    assert check_flow_tools(stdio_flow()) == []


def test_start_failures_keep_secrets_out() -> None:
    flow = with_secret_key(
        """
        mcp_servers:
          gone: {url: "http://127.0.0.1:9/mcp?key=${KEY}"}
        tools:
          gone: {mcp: gone}
        agents:
          a: {functions: [gone]}
        """
    )
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure) as caught:
            toolbox("a", "")
        assert "s3cr3t-value" not in str(caught.value) and "key=***" in str(caught.value)
    finally:
        toolbox.close()


async def test_closing_the_toolbox_stops_the_server_process() -> None:
    flow = stdio_flow()
    flow.agents["a"].functions[:] = ["calc#pid"]
    toolbox = toolbox_for(flow)
    (pid_tool,) = toolbox("a", "")
    pid = int((await pid_tool.call({})).content)
    os.kill(pid, 0)  # alive while the toolbox is open
    await toolbox.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    await toolbox.aclose()  # closing twice is harmless


def calc_server(tools: dict[str, object], functions: list[str], **flow: object) -> Flow:
    """The calc server declared once, exposed by ``tools`` (maybe not at all)."""
    return make_flow(
        {
            "mcp_servers": {"calc": {"command": sys.executable, "args": ["mcp_stdio_server.py"]}},
            "tools": tools,
            "agents": {"USER": {"interrupt": "ALWAYS"}, "a": {"functions": functions}},
            **flow,
        }
    )


async def test_server_hash_tool_takes_the_settings_of_the_entry_exposing_the_server() -> None:
    exposed = {"k": {"mcp": "calc", "timeout": 20, "approval": "always", "direct_output": True}}
    toolbox = toolbox_for(calc_server(exposed, ["calc#add", "k#greet"]))
    try:
        add, greet = toolbox("a", "")
        assert (add.spec.name, greet.spec.name) == ("calc__add", "k__greet")
        for tool in (add, greet):
            assert (tool.timeout, tool.approval, tool.direct_output) == (20, True, True)
        assert add.spec.parameters["required"] == ["a", "b"]
        assert (await add.call({"a": 2, "b": 3})).content == "5"
    finally:
        await toolbox.aclose()


async def test_server_hash_tool_without_an_entry_runs_with_default_settings() -> None:
    call = {"name": "calc__add", "arguments": {"a": 4, "b": 5}}
    flow = calc_server(
        {},
        ["calc#add"],
        defaults={"provider": "mock"},
        providers={"mock": {"kind": "scripted", "replies": [{"tool_calls": [call]}, "nine"]}},
        start={"from": "USER", "to": "a", "content": "add"},
    )
    toolbox = toolbox_for(flow)
    try:
        (add,) = toolbox("a", "")
        assert (add.timeout, add.approval, add.direct_output) == (60, False, False)
    finally:
        await toolbox.aclose()
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    results = [
        (e.name, e.content, e.is_error) for e in log.load() if isinstance(e, ToolResultEvent)
    ]
    assert results == [("calc__add", "9", False)]


def test_a_tool_entry_named_like_a_server_still_comes_first() -> None:
    flow = calc_server({"calc": {"tools": {"add": {"python": "tools_mod:add"}}}}, ["calc#add"])
    (add,) = toolbox_for(flow)("a", "")
    assert add.spec.description == "Add two integers."  # the Python function, not the server's


async def test_a_server_schema_roost_cannot_use_is_left_to_the_server() -> None:
    broken = {"type": "object", "properties": {"x": {"type": "text"}}}
    remote = mcp_types.Tool(name="t", input_schema=broken)
    tool = McpServerTool("s__t", remote, "s", McpHub({}, DATA), McpTool(mcp="s"))
    outcome = await tool.call({"x": 1})  # not refused here: it goes on to the (absent) server
    assert outcome == ToolOutcome("MCP server 's' is not connected", is_error=True)


SSE_FLOW = """\
roost: 1
name: sse
mcp_servers:
  weather:
    url: "{url}"
    transport: sse
    headers: {{Authorization: "Bearer ${{MCP_TOKEN}}"}}
providers:
  mock:
    kind: scripted
    replies:
      - tool_calls:
          - {{name: weather__forecast, arguments: {{city: Oslo}}}}
          - {{name: weather__header, arguments: {{name: authorization}}}}
      - TERMINATE
agents:
  USER: {{interrupt: ALWAYS}}
  a: {{provider: mock, functions: [weather#forecast, weather#header]}}
start: {{from: USER, to: a, content: weather?}}
"""


async def test_a_flow_names_the_sse_transport_and_its_env_file_secret_stays_masked(
    sse_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """YAML to events: the header's token comes from .env, reaches the server, and no event."""
    secret = "mcp-token-from-dotenv-9876"
    monkeypatch.delenv("MCP_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"MCP_TOKEN={secret}\n")
    path = tmp_path / "sse.yaml"
    path.write_text(SSE_FLOW.format(url=sse_url))
    flow = load_flow(path)
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "terminated"
    results = [(e.name, e.content) for e in log.load() if isinstance(e, ToolResultEvent)]
    assert results == [("weather__forecast", "Sunny in Oslo"), ("weather__header", "Bearer ***")]
    assert secret not in "\n".join(e.model_dump_json() for e in log.load())
