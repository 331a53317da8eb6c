"""What a tool call costs roost: Python tools (sync and async), an MCP tool, a tool round.

    python bench/tools.py [--calls 2000] [--messages 1000]

1. One call through the ``Tool`` interface the engine's tool loop uses
   (argument validation against the schema, the call, the result as text):
   a sync Python function (run in a worker thread), an async one (awaited),
   and a tool of an MCP server over stdio written with the official SDK.
   Median and 90th percentile of ``--calls`` calls after a warm-up.
2. The first use of the MCP server: starting it, initialising the session and
   listing its tools, up to the first result.
3. A tool round inside a run: a two-agent chat on a scripted provider where
   every reply first asks for the sync tool, against the same chat without
   tools; the difference per message is what one round costs the engine
   (two more events, one more model call, the tool itself).

All of it runs offline: the tools do next to nothing, so what is measured is
roost's own overhead around them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from roost.tools import toolbox_for

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from roost.flow.models import Flow

TOOLS_MODULE = '''\
import asyncio


def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


async def add_later(a: int, b: int) -> int:
    """Adds two integers, awaiting once."""
    await asyncio.sleep(0)
    return a + b
'''

MCP_SERVER = '''\
from mcp.server.mcpserver import MCPServer

server = MCPServer("numbers")


@server.tool()
def double(value: int) -> int:
    """Doubles a number."""
    return 2 * value


if __name__ == "__main__":
    server.run()
'''

FLOW = """\
roost: 1
name: bench-tools
defaults: {{provider: mock, max_rounds: {n}}}
providers:
  mock:
    kind: scripted
    replies: {replies}
    when_exhausted: cycle
mcp_servers:
  numbers: {{command: {python}, args: [numbers_server.py]}}
tools:
  add: {{python: "bench_tools:add"}}
  add_later: {{python: "bench_tools:add_later"}}
  numbers: {{mcp: numbers}}
agents:
  alice: {{role: You are Alice., functions: [add]}}
  bob: {{role: You are Bob., functions: [add]}}
  carol: {{role: You call every kind of tool., functions: [add, add_later, "numbers#double"]}}
start: {{from: alice, to: bob, content: Hello Bob.}}
"""

WITH_TOOL = '[{tool_calls: [{name: add, arguments: {a: 2, b: 2}}]}, "2 + 2 is 4."]'
WITHOUT_TOOL = '["2 + 2 is 4."]'


def make_flow(folder: Path, messages: int, replies: str) -> Flow:
    (folder / "bench_tools.py").write_text(TOOLS_MODULE, encoding="utf-8")
    (folder / "numbers_server.py").write_text(MCP_SERVER, encoding="utf-8")
    text = FLOW.format(n=messages, replies=replies, python=sys.executable)
    return load_flow_text(text, str(folder / "bench-tools.yaml"))


async def time_calls(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    """Seconds per call, ``count`` calls after a warm-up of a tenth as many."""
    for _ in range(max(1, count // 10)):
        await call()
    times = []
    for _ in range(count):
        began = time.perf_counter()
        await call()
        times.append(time.perf_counter() - began)
    return times


def report(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    median = statistics.median(ordered) * 1e6
    p90 = ordered[int(len(ordered) * 0.9)] * 1e6
    print(f"{label:28} median {median:8.1f} µs   90th percentile {p90:8.1f} µs", flush=True)


async def tool_calls(flow: Flow, count: int) -> None:
    toolbox = toolbox_for(flow)
    try:
        # Offering carol her tools lists the MCP server's, which starts it.
        began = time.perf_counter()
        tools = {tool.spec.name: tool for tool in toolbox("carol")}
        first = await tools["numbers__double"].call({"value": 21})
        started = time.perf_counter() - began
        assert first.content == "42" and not first.is_error, first
        label = "MCP stdio first use"
        print(f"{label:28} {started * 1000:8.0f} ms (start, initialise, list, call)")
        for name, arguments, label in (
            ("add", {"a": 2, "b": 2}, "Python tool (sync, thread)"),
            ("add_later", {"a": 2, "b": 2}, "Python tool (async)"),
            ("numbers__double", {"value": 21}, "MCP tool (stdio)"),
        ):
            tool = tools[name]
            outcome = await tool.call(arguments)
            assert not outcome.is_error, outcome

            def once(tool: Any = tool, arguments: dict[str, Any] = arguments) -> Awaitable[Any]:
                return tool.call(arguments)

            report(label, await time_calls(once, count))
    finally:
        await toolbox.aclose()


def run_seconds(flow: Flow, tries: int) -> tuple[float, int]:
    """Best CPU seconds of ``tries`` runs of ``flow``, and its messages."""
    best, messages = float("inf"), 0
    for _ in range(tries):
        runner = Runner(flow=flow, log=MemoryLog("bench"))
        began = time.process_time()
        state = asyncio.run(runner.start())
        best = min(best, time.process_time() - began)
        assert state.status == "terminated", state.status
        messages = len(state.history)
    return best, messages


def tool_round(folder: Path, messages: int) -> None:
    with_tool, count = run_seconds(make_flow(folder, messages, WITH_TOOL), 3)
    plain, plain_count = run_seconds(make_flow(folder, messages, WITHOUT_TOOL), 3)
    per_with, per_plain = with_tool / count * 1e6, plain / plain_count * 1e6
    print(
        f"{'run, every reply a tool round':28} {per_with:8.1f} µs per message "
        f"(without tools {per_plain:.1f}; one round {per_with - per_plain:.1f} µs)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=1000)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; load {load}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        asyncio.run(tool_calls(make_flow(folder, args.messages, WITHOUT_TOOL), args.calls))
        tool_round(folder, args.messages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
