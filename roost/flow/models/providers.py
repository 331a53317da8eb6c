"""The ``providers:`` section: the models a flow speaks to, and scripted stand-ins."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from roost.flow.models.base import Strict

# --------------------------------------------------------------------------- providers


class ThinkingConfig(Strict):
    budget_tokens: int = Field(..., ge=1)


class ReasoningConfig(Strict):
    effort: Literal["low", "medium", "high"]


class PriceConfig(Strict):
    """What a model costs, in US dollars per million tokens (overrides roost's table)."""

    input: float = Field(..., ge=0, description="US dollars per million input tokens.")
    cached_input: float | None = Field(
        None, ge=0, description="Per million input tokens read from a cache (default: input)."
    )
    output: float = Field(..., ge=0, description="US dollars per million output tokens.")


class _ModelProvider(Strict):
    model: str = Field(..., description="The model name the API expects.")
    base_url: str | None = Field(None, description="Any compatible server.")
    api_key: str | None = Field(None, description='Usually "${OPENAI_API_KEY}" or similar.')
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0, description="Seconds for one call.")
    max_retries: int | None = Field(None, ge=0)
    stream: bool = True
    fallback: list[str] = Field(
        default_factory=list, description="Providers tried in order when this one fails."
    )
    thinking: ThinkingConfig | None = None
    reasoning: ReasoningConfig | None = None
    context_window: int | None = Field(
        None,
        ge=1,
        description="Tokens the model sees at most; history is compressed to fit "
        "(default: roost's table of known models, else 128000).",
    )
    price: PriceConfig | None = Field(
        None, description="US dollars per million tokens (default: roost's table of known models)."
    )
    max_concurrency: int | None = Field(
        None, ge=1, description="Requests in flight at once, across every run of the process."
    )
    requests_per_minute: int | None = Field(
        None, ge=1, description="Requests sent per minute, across every run of the process."
    )
    tokens_per_minute: int | None = Field(
        None,
        ge=1,
        description="Tokens sent per minute (estimated), across every run of the process.",
    )


class OpenAIProviderConfig(_ModelProvider):
    kind: Literal["openai"]


class OpenAIResponsesProviderConfig(_ModelProvider):
    kind: Literal["openai-responses"]


class AnthropicProviderConfig(_ModelProvider):
    kind: Literal["anthropic"]


class ScriptedToolCall(Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedToolCalls(Strict):
    tool_calls: list[ScriptedToolCall] = Field(..., min_length=1)


class ScriptedError(Strict):
    error: str


class ScriptedEcho(Strict):
    echo: Literal["system", "last"]


ScriptedReply = str | ScriptedToolCalls | ScriptedError | ScriptedEcho


class ScriptedProviderConfig(Strict):
    kind: Literal["scripted"]
    model: str = "scripted"
    replies: list[ScriptedReply] = Field(default_factory=list)
    when_exhausted: Literal["error", "repeat_last", "cycle"] = "error"
    fallback: list[str] = Field(default_factory=list)
    # Accepted so that a flow can switch kinds by editing one line; unused by scripted.
    base_url: str | None = None
    api_key: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0)
    max_retries: Literal[0] | None = None
    stream: bool = True
    thinking: ThinkingConfig | None = None
    reasoning: ReasoningConfig | None = None
    context_window: int | None = Field(None, ge=1)
    price: PriceConfig | None = None


ProviderConfig = Annotated[
    OpenAIProviderConfig
    | OpenAIResponsesProviderConfig
    | AnthropicProviderConfig
    | ScriptedProviderConfig,
    Field(discriminator="kind"),
]
