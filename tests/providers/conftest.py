"""Fixtures: a fake LLM server per test and a factory of providers pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fakes.llm_server import FakeLLMServer
from pydantic import TypeAdapter

from roost.flow.models import ProviderConfig
from roost.providers.base import Provider, ProviderContext
from roost.providers.registry import FACTORIES, _factory

KINDS = ("openai", "openai-responses", "anthropic")
API_KEY = "sk-test-SECRET-4242"

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
