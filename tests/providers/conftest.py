"""Fixtures: a fake LLM server per test and a factory of providers pointed at it.

And helpers the provider tests share: two calls of one tool loop with thinking, where in a
reply's stream its first text and its end come, and ``roost`` run as a command with the
environment a test gives it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from cli_inprocess import Ran, run_cli
from fakes import wire
from fakes.llm_server import FakeLLMServer
from fakes.script import FakeCall, Reply, Thinking
from pydantic import TypeAdapter

from roost.flow.models import ProviderConfig
from roost.messages import ModelRequest, ModelResponse, ToolResultMessage, ToolSpec, UserMessage
from roost.providers.base import Provider, ProviderContext
from roost.providers.registry import FACTORIES, _factory

if TYPE_CHECKING:
    from pathlib import Path

KINDS = ("openai", "openai-responses", "anthropic")
API_KEY = "sk-test-SECRET-4242"
ASK = ModelRequest(system="s", messages=(UserMessage(content="hello"),))

MakeProvider = Callable[..., Provider]


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    # roost's own backoff starts at half a second; tests need not wait that long.
    monkeypatch.setattr("roost.providers._retry.INITIAL_BACKOFF", 0.01)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def base_url(kind: str, fake: FakeLLMServer) -> str:
    # The OpenAI SDK appends /chat/completions or /responses to base_url; the
    # Anthropic SDK appends /v1/messages.
    return fake.url if kind == "anthropic" else fake.url + "/v1"


def config(kind: str, fake: FakeLLMServer, **overrides: Any) -> Any:
    data: dict[str, Any] = {
        "kind": kind,
        "model": f"{kind}-model",
        "base_url": base_url(kind, fake),
        "api_key": API_KEY,
        "timeout": 5,
        "max_retries": 2,
    }
    data.update(overrides)
    return TypeAdapter(ProviderConfig).validate_python(data)


@pytest.fixture
def make_provider(server: FakeLLMServer) -> MakeProvider:
    def make(kind: str, name: str = "llm", **overrides: Any) -> Provider:
        assert kind in FACTORIES
        context = ProviderContext(secrets=frozenset({API_KEY}))
        return _factory(kind)(name, config(kind, server, **overrides), context)

    return make


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --------------------------------------------------------------------------- a tool loop

MINE = {"provider": "llm"}  # each reasoning part names the provider that made it
ADD = ToolSpec(name="add", description="Add", parameters={"type": "object"})


async def tool_loop(
    provider_kind: str, server: FakeLLMServer, make: MakeProvider, **cfg: object
) -> tuple[ModelResponse, ModelResponse]:
    """Two calls of one tool loop: a tool call with thinking, then the answer."""
    provider = make(provider_kind, **cfg)
    server.script(
        Reply(
            calls=(FakeCall("add", {"a": 1}, id="t1"),),
            thinking=(
                Thinking("I should add.", "SIG-1"),
                Thinking(signature="OPAQUE", redacted=True),
            ),
        ),
        Reply(text="It is 1."),
    )
    ask = ModelRequest(system="sys", messages=(UserMessage(content="add"),), tools=(ADD,))
    first = await provider.complete(ask)
    result = ToolResultMessage(tool_call_id="t1", name="add", content="1")
    follow = ask.model_copy(update={"messages": (*ask.messages, first.message, result)})
    second = await provider.complete(follow)
    return first, second


# --------------------------------------------------------------------------- streams

API = {"openai": "chat", "openai-responses": "responses", "anthropic": "anthropic"}


def events_of(kind: str, reply: Reply) -> list[wire.Event]:
    render = {"chat": wire.chat_events, "responses": wire.responses_events}
    return render.get(API[kind], wire.anthropic_events)(reply, "m")


def before_final(kind: str, reply: Reply) -> int:
    """How many events of ``reply``'s stream come before the one that makes it whole."""
    events = events_of(kind, reply)
    if kind == "openai":  # the chunk with the finish_reason; usage and [DONE] follow it
        return next(n for n, (_, data) in enumerate(events) if '"finish_reason": "' in data)
    return len(events) - 1  # response.completed, message_stop: the last event


def first_text_event(kind: str, reply: Reply) -> int:
    """How many events of ``reply``'s stream it takes to send its first text."""
    render = {
        "openai": wire.chat_events,
        "openai-responses": wire.responses_events,
        "anthropic": wire.anthropic_events,
    }[kind]
    events = render(reply, "m")
    first_piece = reply.text[: reply.chunk_size]
    return next(n for n, (_, data) in enumerate(events) if f'"{first_piece}"' in data) + 1


# --------------------------------------------------------------------------- command line


def roost(*args: str, cwd: Path, env: dict[str, str]) -> Ran:
    return run_cli(*args, cwd=cwd, env={**os.environ, **env})
