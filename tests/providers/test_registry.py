"""The registry builds a flow's providers by kind, a provider with fallbacks as its chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakes.script import Reply, Status

from roost.flow.models import Flow
from roost.providers.base import ProviderContext
from roost.providers.fallback import FallbackProvider
from roost.providers.registry import build_provider

from .conftest import API_KEY, ASK

if TYPE_CHECKING:
    import pytest
    from fakes.llm_server import FakeLLMServer


async def test_registry_builds_the_chain_from_the_flow(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", API_KEY)
    flow = Flow.model_validate(
        {
            "roost": 1,
            "name": "f",
            "providers": {
                "gpt": {
                    "kind": "openai",
                    "model": "m1",
                    "base_url": server.url + "/v1",
                    "api_key": API_KEY,
                    "max_retries": 0,
                    "fallback": ["claude"],
                },
                "claude": {
                    "kind": "anthropic",
                    "model": "m2",
                    "base_url": server.url,
                    "api_key": API_KEY,
                },
            },
        }
    )
    provider = build_provider("gpt", flow, ProviderContext(secrets=frozenset({API_KEY})))
    assert isinstance(provider, FallbackProvider)
    server.script(Status(503), Reply(text="claude here"))
    response = await provider.complete(ASK)
    assert response.message.content == "claude here" and response.model == "m2"
