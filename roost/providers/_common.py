"""What every HTTP backend shares: its settings and the text sink.

The wire mapping of each API lives in its own module; this one holds the
parts that do not depend on any SDK, so they are written (and tested) once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.errors import ProviderError
from roost.providers.limits import Limiter, limiter_for

if TYPE_CHECKING:
    from roost.providers.base import ProviderContext, TextCallback

DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_RETRIES = 2
ANTHROPIC_DEFAULT_MAX_TOKENS = 8192
# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDKs insist on one.
LOCAL_SERVER_KEY = "not-needed"
# The key of ``ReasoningPart.provider_details`` naming the provider that produced the part.
OWNER = "provider"


@dataclass(frozen=True)
class Settings:
    """One provider entry of a flow, resolved: key read, defaults applied."""

    name: str
    kind: str
    model: str
    key_env: str
    base_url: str | None = None
    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    stream: bool = True
    thinking_budget: int | None = None
    reasoning_effort: str | None = None
    secrets: frozenset[str] = field(default_factory=frozenset)
    limiter: Limiter | None = field(default=None, compare=False, repr=False)  # shared limits

    @property
    def deadline(self) -> float:
        """Seconds one ``complete`` may take in all, retries included."""
        return self.timeout * (self.max_retries + 1)

    @property
    def openai_temperature(self) -> float | None:
        """The temperature an OpenAI API is sent: none while the model reasons (a reasoning
        effort or a thinking budget is set), where those APIs take none."""
        thinking = self.reasoning_effort or self.thinking_budget
        return None if thinking else self.temperature

    def key_hint(self) -> str:
        """Where this provider's key comes from, for error messages."""
        if self.base_url:
            return "the provider's api_key"
        return f"{self.key_env} or the provider's api_key"

    def where(self) -> str:
        """The server this provider talks to, for error messages."""
        return self.base_url or "the default endpoint"


def settings_from(name: str, config: Any, context: ProviderContext, *, key_env: str) -> Settings:
    """Resolve a flow's provider config: the key from the config, else ``key_env``.

    ``key_env`` is read only when ``base_url`` is unset, so an OpenAI key is
    never sent to another server by accident.
    """
    api_key = config.api_key or None
    if api_key is None:
        # The vendor's key from the environment goes to the vendor only: a flow that
        # points base_url elsewhere names its key, or the server needs none.
        api_key = LOCAL_SERVER_KEY if config.base_url else _vendor_key(key_env, context)
    secrets = set(context.secrets)
    if api_key and api_key != LOCAL_SERVER_KEY:
        secrets.add(api_key)
    return Settings(
        name=name,
        kind=config.kind,
        model=config.model,
        key_env=key_env,
        base_url=config.base_url,
        api_key=api_key,
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        timeout=config.timeout or DEFAULT_TIMEOUT,
        max_retries=DEFAULT_MAX_RETRIES if config.max_retries is None else config.max_retries,
        stream=config.stream,
        thinking_budget=config.thinking.budget_tokens if config.thinking else None,
        reasoning_effort=config.reasoning.effort if config.reasoning else None,
        secrets=frozenset(secrets),
        limiter=limiter_for(config),
    )


def _vendor_key(key_env: str, context: ProviderContext) -> str | None:
    """The vendor's key from the environment, else from the flow's .env files."""
    return os.environ.get(key_env) or context.env_files.get(key_env) or None


def require_key(settings: Settings) -> str:
    """The API key, or a ProviderError saying where to put one."""
    if settings.api_key:
        return settings.api_key
    raise ProviderError(
        settings.name,
        f"no API key: set {settings.key_env} in the environment or a .env file, or api_key in the "
        f'provider entry (api_key: "${{{settings.key_env}}}")',
    )


# No model writes an answer this long (the largest allow some 128,000 tokens, well under
# 1 MiB of text): a server sending more is broken or hostile, and reading on fills memory.
MAX_ANSWER_CHARS = 8 << 20


def too_long(settings: Settings) -> ProviderError:
    """The error for an answer longer than ``MAX_ANSWER_CHARS``."""
    return ProviderError(
        settings.name,
        f"{settings.where()} sent an answer of more than {MAX_ANSWER_CHARS >> 20} MiB of text, "
        "longer than any model writes; it was refused",
    )


class TextSink:
    """Passes streamed text on, remembers whether any reached the caller, and refuses an
    answer that grows past ``MAX_ANSWER_CHARS``."""

    def __init__(self, on_text: TextCallback | None, settings: Settings) -> None:
        self._on_text = on_text
        self._settings = settings
        self._length = 0
        self.emitted = False
        self.opened = False  # the server answered and the stream began
        # Anthropic without structured outputs: the tool whose input is the reply,
        # streamed as text as it comes.
        self.reply_tool: str | None = None

    def __call__(self, chunk: str) -> None:
        self._length += len(chunk)
        if self._length > MAX_ANSWER_CHARS:
            raise too_long(self._settings)
        if not chunk or self._on_text is None:
            return
        self.emitted = True
        self._on_text(chunk)
