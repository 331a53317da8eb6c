"""The settings every HTTP backend shares: whose API key is sent where, and a missing one."""

from __future__ import annotations

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import Reply

from roost.errors import ProviderError

from .conftest import ASK, MakeProvider


async def test_the_vendors_key_is_never_sent_to_another_server(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai-1111")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env-anthropic-2222")
    server.script(Reply(text="local"))
    response = await make_provider(kind, api_key=None).complete(ASK)
    assert response.message.content == "local"
    assert server.requests[0].api_key == "not-needed"


def test_the_vendors_key_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from roost.providers._common import settings_from
    from roost.providers.base import ProviderContext

    from .conftest import config

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env-anthropic-2222")
    with FakeLLMServer() as fake:
        cfg = config("anthropic", fake, api_key=None).model_copy(update={"base_url": None})
    settings = settings_from("c", cfg, ProviderContext(), key_env="ANTHROPIC_API_KEY")
    assert settings.api_key == "sk-env-anthropic-2222"
    assert "sk-env-anthropic-2222" in settings.secrets
    assert settings.key_hint() == "ANTHROPIC_API_KEY or the provider's api_key"


async def test_missing_key(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from roost.providers.base import ProviderContext
    from roost.providers.registry import _factory

    from .conftest import config

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with FakeLLMServer() as fake:
        cfg = config(kind, fake, api_key=None).model_copy(update={"base_url": None})
        provider = _factory(kind)("llm", cfg, ProviderContext())
        env = "ANTHROPIC_API_KEY" if kind == "anthropic" else "OPENAI_API_KEY"
        with pytest.raises(ProviderError, match=f"no API key: set {env}"):
            await provider.complete(ASK)
        assert fake.requests == []
