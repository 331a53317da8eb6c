"""A provider's limits hold across every run of the process, against fake servers that measure."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

from fakes.gauged import GaugedLLMServer
from fakes.script import Reply, Status

import roost.api
from roost.events import LlmCallEvent
from roost.messages import ModelRequest, UserMessage
from roost.ports import MemoryLog, new_run_id
from roost.providers import limits

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

FLOW = """
roost: 1
name: limited
providers:
  llm:
    kind: openai
    model: m
    base_url: "{url}/v1"
    api_key: sk-test
    max_retries: {retries}
    {limits}
defaults: {{provider: llm}}
agents:
  USER: {{role: A person.}}
  bot: {{role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def answering(delay: float) -> GaugedLLMServer:
    return GaugedLLMServer(delay=delay, responder=lambda _: Reply(text="Done. TERMINATE"))


def flow_file(folder: Path, url: str, limits: str = "", retries: int = 0) -> Path:
    path = folder / "limited.yaml"
    path.write_text(FLOW.format(url=url, limits=limits, retries=retries), encoding="utf-8")
    return path


async def runs(flow: Path, count: int) -> list[list[LlmCallEvent]]:
    """``count`` runs of the flow at once in this process; each one's llm_call events."""
    logs = [MemoryLog(new_run_id()) for _ in range(count)]
    views = await asyncio.gather(*(roost.api.run(flow, log=log) for log in logs))
    assert [view.status for view in views] == ["terminated"] * count
    return [[e for e in log.load() if isinstance(e, LlmCallEvent)] for log in logs]


async def test_max_concurrency_holds_across_runs_and_each_wait_is_recorded(tmp_path: Path) -> None:
    with answering(0.2) as llm:
        calls = await runs(flow_file(tmp_path, llm.url, "max_concurrency: 2"), 6)
    assert llm.peak == 2 and len(llm.requests) == 6
    waits = sorted(call.waited or 0.0 for run in calls for call in run)
    assert waits[:2] == [0.0, 0.0]  # the first two went at once
    assert all(wait >= 0.15 for wait in waits[2:])  # the others waited for a turn
    assert waits[-1] >= 0.35  # the last two waited for two turns


async def test_without_limits_every_run_goes_at_once(tmp_path: Path) -> None:
    with answering(0.2) as llm:
        calls = await runs(flow_file(tmp_path, llm.url), 4)
    assert llm.peak == 4
    assert all(call.waited is None for run in calls for call in run)
    assert "waited" not in calls[0][0].model_dump(by_alias=True)  # absent when it did not wait


async def test_requests_per_minute_spaces_the_calls(tmp_path: Path) -> None:
    # 120 a minute: after the bucket's first request, one each half second.
    with answering(0.0) as llm:
        began = time.monotonic()
        await runs(flow_file(tmp_path, llm.url, "requests_per_minute: 120"), 3)
    offsets = sorted(moment - began for moment in llm.started)
    assert offsets[-1] >= 0.4  # not all three at once


async def paused(url: str) -> None:
    """Returns once the process's limiter of the flow's endpoint is paused (30 s at most)."""
    endpoint = SimpleNamespace(kind="openai", base_url=f"{url}/v1", model="m")
    deadline = time.monotonic() + 30
    while limits.limiter_for(endpoint).paused_until <= time.monotonic():
        assert time.monotonic() < deadline, "the 429 never paused the provider"
        await asyncio.sleep(0.01)


async def test_a_429_with_retry_after_pauses_the_provider_for_every_run(tmp_path: Path) -> None:
    with answering(0.0) as llm:
        llm.script(Status(429, "slow down", headers={"retry-after": "1"}))
        flow = flow_file(tmp_path, llm.url, retries=2)
        first = asyncio.ensure_future(runs(flow, 1))
        await paused(llm.url)  # the 429 came: the others' calls wait out its retry-after
        others = await runs(flow, 2)
        await first
    refused_at = llm.started[0]
    assert all(moment - refused_at >= 0.9 for moment in llm.started[1:])
    assert len(llm.requests) == 4  # the refused call was retried once, the others never refused
    assert all((run[0].waited or 0.0) >= 0.5 for run in others)


async def test_tokens_per_minute_holds_back_a_request_the_minute_has_no_room_for() -> None:
    limiter = limits.Limiter()
    limiter.configure(None, None, 6000)  # 100 tokens a second, 6000 at once
    request = ModelRequest(messages=(UserMessage(content="x" * 4 * 3050),))  # some 3050 tokens
    waits = []
    for _ in range(2):
        call = limits.begin("llm", request)
        async with limits.turn(limiter):
            pass
        limits.end(call)
        waits.append(call.waited)
    # The first fits at once; the second waits for 100 tokens to leak out: about a second.
    assert waits[0] == 0.0 and 0.6 <= waits[1] <= 2.0


async def test_a_turn_taken_at_once_is_no_wait_however_slow_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limiter = limits.Limiter()
    limiter.configure(2, None, None)  # two at once: the first call is never held back
    ticks = iter([100.0, 100.5, 101.0, 101.5])  # half a second between each reading
    monkeypatch.setattr(limits.time, "monotonic", lambda: next(ticks, 102.0))
    call = limits.begin("llm", None)
    async with limits.turn(limiter) as waited:
        pass
    limits.end(call)
    assert waited == 0.0
    assert call.waited == 0.0
