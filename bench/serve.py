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

3. **A long run**: one run of a person and a scripted bot taken ``--steps``
   turns (5,000) through the server, one message at a time, a stream open on
   it all along: the time from each ``POST /messages`` until the stream says
   the run is paused again, the mean over the first and the last 1,000 steps
   (their ratio is 1 when a step costs the same at the end as at the start).

Figures: runs per second of each, and their ratio; the step time of each
run from its events (its first message to its interrupt) less the two calls'
latency, at p50 and p99, under that load and for runs taken one at a time
(``--single``, 30), beside the raw client's own time for the same two calls taken
one at a time (the fake server's and the SDK's share of that figure, which the
server cannot take off); the server's resident memory per idle run: what its RSS
grows by over a second burst of as many runs, once they have all paused, per run
(the first burst sets the allocator's high-water mark, which the process keeps, so
the second one shows what idle runs hold, not what a burst of them needs at once).

    python bench/serve.py [--runs 1000] [--latency 0.05] [--single 30] [--steps 5000]

``measure()`` gives the same figures as a ``Figures`` (what ``bench/guard.py``
calls); ``ROOST_BENCH_PYTHONPATH`` runs another tree's roost as the server
(the same benchmark before and after a change); ``ROOST_BENCH_PROFILE=FILE`` runs
the server under cProfile, its profile written to FILE when it stops (read it with
``python -m pstats FILE``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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


async def raw(url: str, runs: int, one_at_a_time: list[float] | None = None) -> float:
    """Seconds for ``runs`` concurrent call, tool, call rounds with the raw client; with
    ``one_at_a_time``, the rounds are taken one after another instead, each one's time
    less the two calls' latency appended to it (what the client and the fake server
    themselves add: the floor of what ``roost serve``'s added time can come down to)."""
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
    if one_at_a_time is None:
        await asyncio.gather(*(one() for _ in range(runs)))
    else:
        await one()  # the client's first connection: not counted
        for _ in range(runs):
            start = time.perf_counter()
            await one()
            one_at_a_time.append(time.perf_counter() - start - 2 * LATENCY[0])
    elapsed = time.perf_counter() - began
    await client.close()
    return elapsed


# ---------------------------------------------------------------------- roost serve


LATENCY = [0.05]  # the fake server's, as ``measure`` was given it

CHAT = """
roost: 1
name: bench-chat
defaults: {provider: mock, max_rounds: 1000000}
providers:
  mock: {kind: scripted, replies: ["Noted."], when_exhausted: repeat_last}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  bot: {role: You note.}
start: {from: USER, to: bot, content: Hi}
"""


def start_roost(folder: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "roost", "serve", "--port", "0", "--flows", "flows"]
    if profile := os.environ.get("ROOST_BENCH_PROFILE"):  # the server under cProfile
        command[1:2] = ["-m", "cProfile", "-o", str(Path(profile).resolve()), "-m"]
    command += ["--db", str(folder / "runs.db"), "--queue-limit", "4"]
    env = dict(os.environ)
    if other := os.environ.get("ROOST_BENCH_PYTHONPATH"):
        env["PYTHONPATH"] = other
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, text=True, env=env)
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


def long_run(url: str, steps: int) -> list[float]:
    """Seconds of each of ``steps`` turns of one run, from its message to its next pause."""
    client = httpx2.Client(base_url=url, timeout=120)
    run_id = client.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    times: list[float] = []
    with client.stream("GET", f"/runs/{run_id}/stream") as stream:
        lines = stream.iter_lines()
        seq = _paused(lines, -1)
        for number in range(steps):
            began = time.perf_counter()
            client.post(f"/runs/{run_id}/messages", json={"content": f"note {number}"})
            seq = _paused(lines, seq)
            times.append(time.perf_counter() - began)
    client.close()
    return times


def _paused(lines: Any, after: int) -> int:
    """Reads a stream until it says the run is paused past ``after``; its next_seq."""
    for line in lines:
        if line.startswith("data:") and '"type": "state"' in line:
            item = json.loads(line[5:])
            if item.get("status") == "paused" and item.get("next_seq", 0) > after + 1:
                return int(item["next_seq"]) - 1
    raise SystemExit("the stream ended before the run paused")


@dataclass(frozen=True)
class Figures:
    """What ``measure`` found; times in milliseconds."""

    runs: int
    raw_runs_per_s: float
    served_runs_per_s: float
    added_p50_ms: float  # one run at a time
    added_p99_ms: float
    loaded_p50_ms: float  # ``runs`` at once
    loaded_p99_ms: float
    raw_p50_ms: float  # the raw client's own time over the latency, one round at a time
    kib_per_idle_run: float
    steps: int
    first_steps_ms: float  # mean step of the long run's first 1,000 (or fifth) steps
    last_steps_ms: float

    @property
    def throughput(self) -> float:
        """The server's runs per second as a share of the raw client's."""
        return self.served_runs_per_s / self.raw_runs_per_s

    @property
    def flatness(self) -> float:
        """The long run's last steps' cost over its first steps' (1.0: flat)."""
        return self.last_steps_ms / self.first_steps_ms if self.first_steps_ms else 1.0

    def lines(self) -> list[str]:
        return [
            f"{self.runs} runs, one tool round each",
            f"raw AsyncOpenAI:  {self.raw_runs_per_s:7.1f} runs/s",
            f"roost serve:      {self.served_runs_per_s:7.1f} runs/s",
            f"throughput ratio: {self.throughput * 100:.0f} % of raw",
            f"added per step, {self.runs} at once: p50 {self.loaded_p50_ms:.0f} ms, "
            f"p99 {self.loaded_p99_ms:.0f} ms",
            f"added per step, one at a time: p50 {self.added_p50_ms:.1f} ms, "
            f"p99 {self.added_p99_ms:.1f} ms",
            f"the raw client's own, one at a time: p50 {self.raw_p50_ms:.1f} ms",
            f"memory per idle run: {self.kib_per_idle_run:.1f} KiB",
            f"long run of {self.steps} steps: first {self.first_steps_ms:.2f} ms/step, "
            f"last {self.last_steps_ms:.2f} ms/step ({self.flatness:.2f}x)",
        ]


def measure(runs: int = 1000, latency: float = 0.05, lone: int = 30, steps: int = 5000) -> Figures:
    """Every figure of this benchmark, each server and client in processes of their own."""
    port = free_port()
    fake = multiprocessing.Process(target=fake_server, args=(port, latency), daemon=True)
    fake.start()
    wait_listening(port)
    url = f"http://127.0.0.1:{port}"
    try:
        LATENCY[0] = latency
        raw_seconds = asyncio.run(raw(url, runs))
        raw_single: list[float] = []
        asyncio.run(raw(url, lone, raw_single))
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            (folder / "flows").mkdir()
            (folder / "flows" / "bench.yaml").write_text(FLOW.format(url=url))
            (folder / "flows" / "benchtools.py").write_text(TOOLS)
            (folder / "flows" / "chat.yaml").write_text(CHAT)
            process, served_url = start_roost(folder)
            try:
                single_times = asyncio.run(single(served_url, lone, latency))
                seconds, added = asyncio.run(served(served_url, runs, latency))
                # A second burst as large: the first one's high-water mark is reached
                # already, so what the second adds is what its runs keep while idle.
                before = rss_kib(process.pid)
                asyncio.run(served(served_url, runs, latency))
                after = rss_kib(process.pid)
                step_times = long_run(served_url, steps) if steps else [0.0, 0.0]
            finally:
                process.terminate()
                process.wait(30)
    finally:
        fake.terminate()
        fake.join(10)
    part = max(1, min(1000, len(step_times) // 5))
    return Figures(
        runs=runs,
        raw_runs_per_s=runs / raw_seconds,
        served_runs_per_s=runs / seconds,
        added_p50_ms=statistics.median(single_times) * 1000,
        added_p99_ms=percentile(single_times, 0.99) * 1000,
        loaded_p50_ms=percentile(added, 0.5) * 1000,
        loaded_p99_ms=percentile(added, 0.99) * 1000,
        raw_p50_ms=statistics.median(raw_single) * 1000,
        kib_per_idle_run=(after - before) / runs,
        steps=steps,
        first_steps_ms=statistics.fmean(step_times[:part]) * 1000,
        last_steps_ms=statistics.fmean(step_times[-part:]) * 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--single", type=int, default=30)
    parser.add_argument("--steps", type=int, default=5000)
    options = parser.parse_args()
    figures = measure(options.runs, options.latency, options.single, options.steps)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"model latency {options.latency * 1000:.0f} ms; load {load}")
    print("\n".join(figures.lines()))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
