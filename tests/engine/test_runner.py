"""The Runner API: events as they happen, streaming, overrides and secrets."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner, fold
from roost.engine.sources import Sources
from roost.errors import UsageError
from roost.flow import load_flow_text
from roost.messages import AssistantMessage, ModelRequest, ModelResponse, Usage
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, messages

if TYPE_CHECKING:
    from roost.events import Event

FLOW = """
roost: 1
name: api
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [one, two, TERMINATE]}
agents:
  USER: {role: u}
  bot: {role: b}
start: {from: USER, to: bot, content: go}
"""


async def test_events_iterates_what_is_appended_until_the_step_returns() -> None:
    log = MemoryLog("r")
    runner = Runner(flow=make_flow(FLOW), log=log)
    seen: list[Event] = []

    async def collect() -> None:
        async for event in runner.events():
            seen.append(event)

    task = asyncio.create_task(collect())
    await asyncio.sleep(0)
    await runner.start()
    await asyncio.wait_for(task, 5)
    assert seen == log.load()


async def test_on_event_and_on_text_are_called() -> None:
    events: list[Event] = []
    texts: list[tuple[str, str]] = []
    runner = Runner(
        flow=make_flow(FLOW),
        log=MemoryLog("r"),
        on_event=events.append,
        on_text=lambda node, chunk: texts.append((node, chunk)),
    )
    await runner.start()
    assert [e.seq for e in events] == list(range(len(events)))
    assert texts == [("bot", "one"), ("USER", "two"), ("bot", "TERMINATE")]


async def test_start_overrides_and_bad_routes() -> None:
    log = MemoryLog("r")
    runner = Runner(flow=make_flow(FLOW), log=log)
    await runner.start("other words", from_="bot", to="USER")
    assert messages(log.load())[:2] == [("bot", "USER", "other words"), ("USER", "bot", "one")]
    with pytest.raises(UsageError, match="nobody"):
        await Runner(flow=make_flow(FLOW), log=MemoryLog("x")).start(to="nobody")
    with pytest.raises(UsageError, match="'USER' to itself"):
        await Runner(flow=make_flow(FLOW), log=MemoryLog("s")).start(to="USER")
    no_start = FLOW.replace("start: {from: USER, to: bot, content: go}", "")
    with pytest.raises(UsageError, match="no start"):
        await Runner(flow=make_flow(no_start), log=MemoryLog("y")).start()


async def test_secrets_never_reach_error_text() -> None:
    text = FLOW.replace("[one, two, TERMINATE]", '[{error: "token ${TOKEN} refused"}]')
    flow = load_flow_text(text, "api.yaml", environ={"TOKEN": "sk-very-secret-1234"})
    assert "sk-very-secret-1234" in flow.secrets
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "error"
    dumped = "".join(e.model_dump_json() for e in log.load())
    assert "sk-very-secret-1234" not in dumped
    assert "token *** refused" in log.load()[-1].content


async def test_a_failing_provider_factory_is_an_error_entry() -> None:
    def broken(name: str) -> object:
        raise RuntimeError("no key for gpt")

    log = MemoryLog("r")
    state = await Runner(flow=make_flow(FLOW), log=log, sources=Sources(providers=broken)).start()  # type: ignore[arg-type]
    assert state.status == "error"
    assert "no key for gpt" in log.load()[-1].content
    assert not [e for e in log.load() if e.type == "llm_call"]


async def test_ten_thousand_messages_run_without_growing_the_stack() -> None:
    text = """
    roost: 1
    name: long
    defaults: {provider: mock, max_rounds: 10000}
    providers: {mock: {kind: scripted, replies: [x], when_exhausted: repeat_last}}
    agents: {a: {role: a}, b: {role: b}}
    start: {from: a, to: b, content: go}
    """
    log = MemoryLog("r")
    state = await Runner(flow=make_flow(text), log=log).start()
    assert state.status == "terminated"
    assert len(state.history) == 10000


class CountingProvider:
    """Answers TERMINATE and reports token counts, as a real provider would."""

    name = "mock"
    model = "counting"

    async def complete(self, request: ModelRequest, *, on_text: object = None) -> ModelResponse:
        return ModelResponse(
            message=AssistantMessage(content="TERMINATE"),
            usage=Usage(prompt_tokens=12, completion_tokens=3, cached_tokens=2),
            model="counting-1",
        )


async def test_usage_is_recorded_and_summed() -> None:
    log = MemoryLog("r")
    runner = Runner(
        flow=make_flow(FLOW), log=log, sources=Sources(providers=lambda name: CountingProvider())
    )  # type: ignore[arg-type,return-value]
    state = await runner.start()
    call = next(e for e in log.load() if e.type == "llm_call")
    assert call.usage is not None and call.usage.model_dump() == {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "cached_tokens": 2,
        "reasoning_tokens": 0,
        "calls": 1,
    }
    assert call.model == "counting-1"
    assert (state.usage.prompt_tokens, state.usage.completion_tokens, state.usage.calls) == (
        12,
        3,
        1,
    )
    assert fold(log.load()).usage == state.usage


class ScriptedUsageProvider:
    """Answers from a list, each answer with the token counts given for it."""

    name = "mock"
    model = "counting"

    def __init__(self, answers: list[tuple[str, Usage]]) -> None:
        self.answers = answers

    async def complete(self, request: ModelRequest, *, on_text: object = None) -> ModelResponse:
        text, usage = self.answers.pop(0)
        return ModelResponse(message=AssistantMessage(content=text), usage=usage)


async def test_a_call_that_counted_only_prompt_tokens_is_in_the_total() -> None:
    provider = ScriptedUsageProvider(
        [("", Usage(prompt_tokens=10)), ("TERMINATE", Usage(prompt_tokens=5, completion_tokens=2))]
    )
    log = MemoryLog("r")
    state = await Runner(
        flow=make_flow(FLOW), log=log, sources=Sources(providers=lambda name: provider)
    ).start()  # type: ignore[arg-type,return-value]
    assert (state.usage.prompt_tokens, state.usage.completion_tokens, state.usage.calls) == (
        15,
        2,
        2,
    )
    assert fold(log.load()).usage == state.usage
