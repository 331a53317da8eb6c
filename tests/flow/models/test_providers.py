"""A provider's settings: each kind by its ``kind``, numbers within the API's bounds."""

from __future__ import annotations

import pydantic
import pytest

from roost.flow.models import Flow, OpenAIProviderConfig, PriceConfig, ScriptedProviderConfig


def test_each_kind_of_provider_is_its_own_model() -> None:
    flow = Flow.model_validate(
        {
            "roost": 1,
            "providers": {
                "gpt": {"kind": "openai", "model": "m", "price": {"input": 1.0, "output": 2.0}},
                "mock": {"kind": "scripted", "replies": ["hi"]},
            },
        }
    )
    gpt, mock = flow.providers["gpt"], flow.providers["mock"]
    assert isinstance(gpt, OpenAIProviderConfig) and isinstance(mock, ScriptedProviderConfig)
    assert gpt.stream is True and gpt.fallback == []
    assert gpt.price == PriceConfig(input=1.0, output=2.0)


@pytest.mark.parametrize(
    "settings",
    [
        {"temperature": 2.5},
        {"max_tokens": 0},
        {"timeout": 0.0},
        {"price": {"input": -1.0, "output": 1.0}},
    ],
)
def test_a_setting_out_of_its_bounds_is_refused(settings: dict[str, object]) -> None:
    OpenAIProviderConfig.model_validate({"kind": "openai", "model": "m"})
    with pytest.raises(pydantic.ValidationError):
        OpenAIProviderConfig.model_validate({"kind": "openai", "model": "m", **settings})
