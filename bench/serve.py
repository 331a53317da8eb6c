"""What ``roost serve`` adds to many concurrent runs, against the raw OpenAI client.

A fake OpenAI-compatible server on loopback (its own process, uvicorn) answers
every chat completion after ``--latency`` seconds (50 ms): a request without a
tool result gets a call of the ``echo`` tool, one with a tool result gets a
short text. A run of the benchmark flow therefore makes one model call, runs
one tool round and makes the closing call, then pauses for its person.

1. **Raw**: ``--runs`` tasks (1,000) at once, each making those two calls with
   one ``AsyncOpenAI`` client (the tool's work done in between, inline).
2. **roost serve**: a real ``roost serve`` process on a SQLite store; the client
   starts ``--runs`` runs over HTTP (``POST /runs``, up to 100 requests in
   flight) and waits until all of them are paused. Its time runs from the
   first run's first event to the last run's interrupt, by the events' own
   time stamps (the client's polling is not counted).

Figures: runs per second of each, and their ratio; the step time of each
run from its events (its first message to its interrupt) less the two calls'
latency, at p50 and p99, under that load and for runs taken one at a time
(``--single``, 30); the server's resident memory per idle run once all the
runs have paused (its RSS after, less before, over the number of runs).

    python bench/serve.py [--runs 1000] [--latency 0.05] [--single 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    from starlette.requests import Request

FLOW = """
roost: 1
name: bench-serve
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: sk-bench, max_retries: 0,
         stream: false, timeout: 120}}
defaults: {{provider: llm}}
tools:
  echo: {{python: "benchtools:echo", description: Echoes its text.}}
agents:
  USER: {{interrupt: ALWAYS, role: A person.}}
  bot: {{role: "You use your tool once, then answer.", functions: [echo]}}
start: {{from: USER, to: bot, content: Echo hi.}}
"""

TOOLS = '''
def echo(text: str) -> str:
    """Gives TEXT back."""
    return text
'''

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "echo", "arguments": '{"text": "hi"}'},
        }
    ],
}
TEXT = {"role": "assistant", "content": "It said hi."}


def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }


def fake_server(port: int, latency: float) -> None:
    """The fake OpenAI-compatible server, run in a child process."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        await asyncio.sleep(latency)
        answered = any(message.get("role") == "tool" for message in body["messages"])
        reply = completion(TEXT, "stop") if answered else completion(CALL, "tool_calls")
        return JSONResponse(reply)

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=4096)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(port: int) -> None:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


# ---------------------------------------------------------------------- raw client


async def raw(url: str, runs: int) -> float:
    """Seconds for ``runs`` concurrent call, tool, call rounds with the raw client."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-bench", max_retries=0, timeout=120)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": "Echoes its text.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            },
        }
    ]

    async def one() -> None:
        messages: list[Any] = [
            {"role": "system", "content": "You use your tool once, then answer."},
            {"role": "user", "content": "Echo hi."},
        ]
        first = await client.chat.completions.create(model="m", messages=messages, tools=tools)  # type: ignore[arg-type]
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        result = json.loads(call.function.arguments)["text"]  # type: ignore[union-attr]
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": result},
        ]
        await client.chat.completions.create(model="m", messages=messages, tools=tools)  # type: ignore[arg-type]

    began = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(runs)))
    elapsed = time.perf_counter() - began
    await client.close()
    return elapsed


# ---------------------------------------------------------------------- roost serve


def start_roost(folder: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "roost", "serve", "--port", "0", "--flows", "flows"]
    command += ["--db", str(folder / "runs.db"), "--queue-limit", "4"]
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on " not in line:
        raise SystemExit(f"roost serve did not start: {line!r}")
    return process, line.split("listening on ", 1)[1].split()[0]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def stamp(event: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(event["ts"].replace("Z", "+00:00"))


def added_seconds(events: list[dict[str, Any]], latency: float) -> float:
    """The step's time (first message to its interrupt) less the two model calls' latency."""
    stamps = [stamp(e) for e in events if e["type"] in ("message", "interrupt")]
    return (stamps[-1] - stamps[0]).total_seconds() - 2 * latency


async def served(url: str, runs: int, latency: float) -> tuple[float, list[float]]:
    """Seconds until ``runs`` runs started at once have all paused, and each one's added time."""
    limits = httpx2.Limits(max_connections=100)
    async with httpx2.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
        gate = asyncio.Semaphore(100)

        async def start() -> str:
            async with gate:
                answer = await client.post("/runs", json={"flow": "bench.yaml"})
                answer.raise_for_status()
                return str(answer.json()["id"])

        began = time.perf_counter()
        ids = await asyncio.gather(*(start() for _ in range(runs)))
        while True:  # a light poll: the figures come from the events' own time stamps
            listed = (await client.get("/runs", params={"status": "paused", "limit": 1000})).json()
            if len({row["id"] for row in listed} & set(ids)) == runs:
                break
            await asyncio.sleep(0.5)
        waited = time.perf_counter() - began

        async def events(run_id: str) -> list[dict[str, Any]]:
            async with gate:
                found: list[dict[str, Any]] = (await client.get(f"/runs/{run_id}/events")).json()
                return found

        logs = await asyncio.gather(*(events(run_id) for run_id in ids))
        first = min(stamp(log[0]) for log in logs)
        last = max(stamp(log[-1]) for log in logs)
        elapsed = min(waited, (last - first).total_seconds())
        return elapsed, [added_seconds(log, latency) for log in logs]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def single(url: str, count: int, latency: float) -> list[float]:
    """Each run's added time when runs are taken one at a time."""
    await served(url, 1, latency)  # the first run imports the providers: not counted
    times: list[float] = []
    for _ in range(count):
        _, added = await served(url, 1, latency)
        times += added
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--single", type=int, default=30)
    options = parser.parse_args()

    port = free_port()
    fake = multiprocessing.Process(target=fake_server, args=(port, options.latency), daemon=True)
    fake.start()
    wait_listening(port)
    url = f"http://127.0.0.1:{port}"
    try:
        raw_seconds = asyncio.run(raw(url, options.runs))
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            (folder / "flows").mkdir()
            (folder / "flows" / "bench.yaml").write_text(FLOW.format(url=url))
            (folder / "flows" / "benchtools.py").write_text(TOOLS)
            process, served_url = start_roost(folder)
            try:
                lone = asyncio.run(single(served_url, options.single, options.latency))
                before = rss_kib(process.pid)
                seconds, added = asyncio.run(served(served_url, options.runs, options.latency))
                after = rss_kib(process.pid)
            finally:
                process.terminate()
                process.wait(30)
    finally:
        fake.terminate()
        fake.join(10)

    runs = options.runs
    print(f"{runs} runs, one tool round each, model latency {options.latency * 1000:.0f} ms")
    print(f"raw AsyncOpenAI:  {raw_seconds:6.2f} s  {runs / raw_seconds:7.1f} runs/s")
    print(f"roost serve:      {seconds:6.2f} s  {runs / seconds:7.1f} runs/s")
    print(f"throughput ratio: {raw_seconds / seconds * 100:.0f} % of raw")
    print(
        f"added per step, {runs} at once: p50 {percentile(added, 0.5) * 1000:.0f} ms, "
        f"p99 {percentile(added, 0.99) * 1000:.0f} ms"
    )
    print(
        f"added per step, one at a time ({len(lone)} runs): p50 "
        f"{statistics.median(lone) * 1000:.1f} ms, p99 {percentile(lone, 0.99) * 1000:.1f} ms"
    )
    per_run = (after - before) / runs
    print(f"memory per idle run: {per_run:.1f} KiB (server RSS {after // 1024} MiB)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
