"""A long two-agent chat against a model with a small window: does it fit, and at what cost?

    python bench/compaction.py [--turns 500] [--window 4000]

The fake model server of the tests (OpenAI's Chat Completions, through the real
SDK) refuses any request above ``--window`` tokens, as a real model does, and
reports each request's size as its prompt tokens. Two agents talk for
``--turns`` messages with the same window in their flow. Printed:

1. messages answered, and the requests the server refused as too long;
2. the prompt tokens of the agents' calls before the first compaction, and
   after it (min, median, max): flat once compaction has begun;
3. compactions by stage, and their cost: the summary calls' tokens per message;
4. the wall time of ``roost replay``'s re-execution of the run (no model called).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer, Received
from fakes.script import Action, Reply

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import CompactEvent, Event, LlmCallEvent, MessageEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from roost.flow.models import Flow

SENTENCES = (
    "The tide came in over the flats before noon.",
    "We counted forty-two boats leaving the harbour.",
    "The wind turned north-west and the gulls went quiet.",
    "Someone said the lighthouse keeper had left in 1987.",
)


def answer(received: Received) -> Action:
    """A reply of about 60 words; a request for a summary gets a short summary."""
    messages = received.body.get("messages", ())
    last = str(messages[-1].get("content", "")) if messages else ""
    if "Summarise the conversation below" in last:
        return Reply(text="They talked about the tide, the boats, the wind and the lighthouse.")
    n = len(messages)
    return Reply(text=f"Turn {n}. " + " ".join(SENTENCES[(n + i) % 4] for i in range(5)))


def flow_for(url: str, turns: int, window: int) -> Flow:
    text = f"""\
        roost: 1
        name: long-chat
        defaults: {{provider: llm, max_rounds: {turns}}}
        providers:
          llm: {{kind: openai, model: fake-model, base_url: "{url}/v1", api_key: sk-bench,
                max_retries: 0, stream: false, context_window: {window}}}
        agents:
          a: {{role: You are a sailor. Answer in a few sentences.}}
          b: {{role: You are a fisher. Answer in a few sentences.}}
        start: {{from: a, to: b, content: "Tell me about the harbour today."}}
        """
    return load_flow_text(textwrap.dedent(text), "long-chat.yaml")


async def run(flow: Flow) -> list[Event]:
    log = MemoryLog("bench")
    await Runner(flow=flow, log=log).start()
    return log.load()


def report(events: list[Event], refused: int, turns: int) -> None:
    messages = sum(isinstance(e, MessageEvent) for e in events)
    compacts = [e for e in events if isinstance(e, CompactEvent)]
    calls = [e for e in events if isinstance(e, LlmCallEvent)]
    first = compacts[0].seq if compacts else len(events)
    own = [c for c in calls if c.purpose is None and c.usage is not None]
    before = [c.usage.prompt_tokens for c in own if c.seq < first and c.usage]
    after = [c.usage.prompt_tokens for c in own if c.seq > first and c.usage]
    summaries = [c for c in calls if c.purpose == "summary" and c.usage is not None]
    spent = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in summaries if c.usage)
    print(f"messages: {messages} (max_rounds {turns}: the start message and every answer)")
    print(f"errors: {sum(e.type == 'error' for e in events)}, refused as too long: {refused}")
    print(f"prompt tokens before the first compaction: {min(before)}..{max(before)}")
    if after:
        print(
            f"prompt tokens after it: min {min(after)}, median {statistics.median(after):.0f}, "
            f"max {max(after)} over {len(after)} calls"
        )
    print(f"compactions: {dict(Counter(c.stage for c in compacts))}")
    print(
        f"summary calls: {len(summaries)}, {spent} tokens, "
        f"{spent / max(messages, 1):.1f} tokens per message"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--window", type=int, default=4000)
    args = parser.parse_args()
    with FakeLLMServer(window=args.window, responder=answer) as server:
        started = time.perf_counter()
        events = asyncio.run(run(flow_for(server.url, args.turns, args.window)))
        took = time.perf_counter() - started
        refused = server.refused
    report(events, refused, args.turns)
    print(f"run: {took:.1f} s for {len(events)} events")
    started = time.perf_counter()
    replayed = asyncio.run(replay_run(None, events))
    took = time.perf_counter() - started
    print(f"replay: {'identical' if replayed.identical else 'DIVERGED'} in {took:.2f} s")


if __name__ == "__main__":
    main()
