"""The scripted provider (section 5)."""

from __future__ import annotations

import pytest

from roost.engine import Runner
from roost.errors import ProviderError
from roost.flow.models import ScriptedProviderConfig
from roost.messages import ModelRequest, UserMessage
from roost.ports import MemoryLog
from roost.providers.base import ProviderContext
from roost.providers.registry import build_provider
from roost.providers.scripted import ScriptedProvider, create
from tests.engine.conftest import make_flow, messages


def scripted(replies: list[object], **options: object) -> ScriptedProvider:
    config = ScriptedProviderConfig.model_validate(
        {"kind": "scripted", "replies": replies, **options}
    )
    return create("mock", config, ProviderContext())


REQUEST = ModelRequest(system="the system", messages=(UserMessage(content="the last"),))


async def test_strings_come_in_order_and_then_it_fails_naming_the_provider() -> None:
    provider = scripted(["one", "two"])
    assert (await provider.complete(REQUEST)).message.content == "one"
    assert (await provider.complete(REQUEST)).message.content == "two"
    with pytest.raises(ProviderError, match=r"'mock'.*no reply left"):
        await provider.complete(REQUEST)


async def test_repeat_last_and_cycle() -> None:
    repeat = scripted(["a", "b"], when_exhausted="repeat_last")
    assert [(await repeat.complete(REQUEST)).message.content for _ in range(4)] == [
        "a",
        "b",
        "b",
        "b",
    ]
    cycle = scripted(["a", "b"], when_exhausted="cycle")
    assert [(await cycle.complete(REQUEST)).message.content for _ in range(5)] == list("ababa")


async def test_an_empty_list_with_repeat_last_is_still_an_error() -> None:
    with pytest.raises(ProviderError):
        await scripted([], when_exhausted="repeat_last").complete(REQUEST)


async def test_tool_calls_get_deterministic_ids_when_absent() -> None:
    provider = scripted(
        ["x", {"tool_calls": [{"name": "add", "arguments": {"a": 1}}, {"name": "b", "id": "mine"}]}]
    )
    await provider.complete(REQUEST)
    calls = (await provider.complete(REQUEST)).message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_1_0", "add", {"a": 1}),
        ("mine", "b", {}),
    ]


async def test_errors_count_as_calls() -> None:
    provider = scripted([{"error": "boom"}, "after"])
    with pytest.raises(ProviderError, match="boom"):
        await provider.complete(REQUEST)
    assert (await provider.complete(REQUEST)).message.content == "after"


async def test_echo_system_and_last() -> None:
    provider = scripted([{"echo": "system"}, {"echo": "last"}, {"echo": "last"}])
    assert (await provider.complete(REQUEST)).message.content == "the system"
    assert (await provider.complete(REQUEST)).message.content == "the last"
    assert (await provider.complete(ModelRequest())).message.content == ""


async def test_streaming_callers_get_the_text() -> None:
    chunks: list[str] = []
    await scripted(["hello"]).complete(REQUEST, on_text=chunks.append)
    assert chunks == ["hello"]


async def test_position_comes_from_the_context() -> None:
    config = ScriptedProviderConfig.model_validate({"kind": "scripted", "replies": ["a", "b", "c"]})
    provider = create("mock", config, ProviderContext(attempts_so_far={"mock": 2}))
    assert (await provider.complete(REQUEST)).message.content == "c"


async def test_it_is_built_through_the_registry() -> None:
    flow = make_flow(
        """
        roost: 1
        name: r
        providers: {mock: {kind: scripted, replies: [hi]}}
        """
    )
    provider = build_provider("mock", flow, ProviderContext())
    assert provider.name == "mock" and provider.model == "scripted"


async def test_a_run_continued_by_a_new_runner_picks_up_the_position() -> None:
    text = """
    roost: 1
    name: p
    defaults: {provider: mock}
    providers:
      mock: {kind: scripted, replies: [one, INTERRUPT, three, {error: x}, five, TERMINATE]}
    agents:
      USER: {role: u}
      bot: {role: b}
    start: {from: USER, to: bot, content: go}
    """
    log = MemoryLog("r")
    state = await Runner(flow=make_flow(text), log=log).start()
    assert state.status == "paused" and state.provider_attempts == {"mock": 2}
    state = await Runner(flow=make_flow(text), log=log).continue_("")
    assert state.status == "error" and state.provider_attempts == {"mock": 4}
    state = await Runner(flow=make_flow(text), log=log).retry()
    assert state.status == "terminated"
    assert [m[2] for m in messages(log.load())] == [
        "go",
        "one",
        "INTERRUPT",
        "three",
        "five",
        "TERMINATE",
    ]


async def test_a_scripted_fallback_keeps_its_position_in_a_new_runner() -> None:
    # p always fails; q answers. A new process must count q's answers from the log.
    text = """
    roost: 1
    name: fb
    providers:
      p: {kind: scripted, replies: [{error: p1}, {error: p2}, {error: p3}], fallback: [q]}
      q: {kind: scripted, replies: [q1, q2, q3]}
    agents:
      USER: {role: u, interrupt: ALWAYS}
      A: {role: a, provider: p}
    start: {from: USER, to: A, content: go}
    """
    log = MemoryLog("run-1")
    await Runner(flow=make_flow(text), log=log).start()
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert [a.provider for a in calls[0].attempts] == ["p", "q"]
    await Runner(flow=make_flow(text), log=log).continue_("more")
    await Runner(flow=make_flow(text), log=log).continue_("again")
    replies = [content for frm, _, content in messages(log.load()) if frm == "A"]
    assert replies == ["q1", "q2", "q3"]
