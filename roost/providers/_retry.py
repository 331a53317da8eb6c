"""Attempts and retries around one model call.

The SDK retries what it can see before a response begins (408, 409, 429, 5xx,
connection errors), honouring ``Retry-After``. What it cannot see is a stream
that breaks after it began: a reset connection, a stalled read, an error event
inside a 200 answer. Those are retried here, with backoff and within the call's
overall deadline, unless text already reached the person: then the failure is
raised as ``StreamInterruptedError`` so the run records an error that
``roost retry`` resumes, instead of silently saying things twice.

Every HTTP request the SDK makes passes through httpx event hooks that record
it as an attempt, so retries the SDK does by itself are counted too.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from roost.errors import ProviderError
from roost.providers import limits
from roost.providers._common import Settings, TextSink
from roost.providers._errors import _retry_after, translate

if TYPE_CHECKING:
    import ssl
    from collections.abc import Awaitable, Callable, Sequence
    from types import ModuleType

    from roost.providers.base import TextCallback

T = TypeVar("T")
Attempt = dict[str, Any]

_attempts: ContextVar[list[Attempt] | None] = ContextVar("roost_attempts", default=None)

INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0


class StreamInterruptedError(ProviderError):
    """A streamed answer failed after some of its text was shown: not retried silently."""


class AttemptHooks:
    """httpx event hooks that record each request of the current call as an attempt."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def event_hooks(self) -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
        """The ``event_hooks`` argument of an httpx client."""
        return {"request": [self._on_request], "response": [self._on_response]}

    def client_options(self) -> dict[str, Any]:
        """The options of every SDK backend's httpx client: these hooks, and no redirects.

        The SDKs follow redirects by default; a server that answers a request with a
        redirect would have roost send the conversation on to wherever it points.
        """
        return {
            "event_hooks": self.event_hooks(),
            "follow_redirects": False,
            "verify": shared_ssl_context(),
        }

    async def _on_request(self, request: Any) -> None:
        attempts = _attempts.get()
        if attempts is not None:
            attempts.append(
                {"provider": self._settings.name, "model": self._settings.model, "outcome": "sent"}
            )

    async def _on_response(self, response: Any) -> None:
        if response.status_code == 429 and self._settings.limiter is not None:
            self._settings.limiter.pause(_retry_after(response))  # for every run of the process
        attempts = _attempts.get()
        if attempts:
            attempts[-1]["status"] = response.status_code
            attempts[-1]["outcome"] = "ok" if response.status_code < 400 else "http"


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The SDKs' own default TLS settings, made once for the process.

    Loading the certificate authorities takes tens of milliseconds; a server
    that makes a client for each of a thousand runs would spend seconds on it.
    """
    import httpcore2

    context: ssl.SSLContext = httpcore2.default_ssl_context()
    return context


async def call_with_retries(
    settings: Settings,
    sdk: ModuleType,
    attempt: Callable[[TextSink], Awaitable[T]],
    on_text: TextCallback | None,
) -> tuple[T, tuple[Attempt, ...]]:
    """Run ``attempt`` until it succeeds, retrying broken streams; return it and its attempts."""
    attempts: list[Attempt] = []
    token = _attempts.set(attempts)
    deadline = time.monotonic() + settings.deadline
    try:
        for retry in range(settings.max_retries + 1):
            sink = TextSink(on_text, settings)
            try:
                async with limits.turn(settings.limiter) as waited:
                    deadline += waited  # a wait for the provider's limits is not the server's
                    # The SDK's timeout bounds each wait for the server; a server that never
                    # stops sending (a stream without end, keep-alive pings) is cut off one
                    # timeout past the deadline, so one that only went quiet is reported so.
                    limit = asyncio.timeout(
                        max(deadline - time.monotonic(), 0.0) + settings.timeout
                    )
                    async with limit:
                        result = await attempt(sink)
            except Exception as exc:  # translated right here, at the edge
                cause = _unfinished(settings) if limit.expired() else exc
                failure = translate(cause, settings, sdk, streaming=sink.opened)
                _close_attempt(attempts, settings, failure.outcome)
                failure.error.attempts = finished(attempts)
                if sink.emitted:
                    raise _interrupted(failure.error, attempts) from exc
                delay = _backoff(retry, failure.retry_after)
                last = retry == settings.max_retries
                if not failure.retryable or last or time.monotonic() + delay > deadline:
                    raise failure.error from exc
                await asyncio.sleep(delay)
                continue
            _close_attempt(attempts, settings, "ok")
            return result, finished(attempts)
        raise AssertionError("unreachable: the last try returns or raises")
    finally:
        _attempts.reset(token)


def _close_attempt(attempts: list[Attempt], settings: Settings, outcome: str) -> None:
    """Give the last attempt its final outcome; add one if no request was sent."""
    if not attempts or attempts[-1].get("closed"):
        attempts.append({"provider": settings.name, "model": settings.model})
    # Requests the SDK retried by itself end in an HTTP status or a network failure.
    for earlier in attempts[:-1]:
        if not earlier.get("closed"):
            earlier["outcome"] = _earlier_outcome(earlier)
            earlier["closed"] = True
    attempts[-1]["outcome"] = outcome
    attempts[-1]["closed"] = True


def _earlier_outcome(attempt: Attempt) -> str:
    status = attempt.get("status")
    return f"http {status}" if status is not None else "connection error"


def finished(attempts: Sequence[Attempt]) -> tuple[Attempt, ...]:
    """The attempts as recorded in events: without bookkeeping keys."""
    return tuple({k: v for k, v in a.items() if k != "closed"} for a in attempts)


def _interrupted(error: ProviderError, attempts: list[Attempt]) -> StreamInterruptedError:
    message = str(error).split(": ", 1)[-1]
    interrupted = StreamInterruptedError(
        error.provider,
        f"{message} (the answer broke off after part of it was shown; `roost retry` asks again)",
    )
    interrupted.attempts = finished(attempts)
    return interrupted


def _unfinished(settings: Settings) -> ProviderError:
    return ProviderError(
        settings.name,
        f"{settings.where()} kept sending but had not finished its answer after "
        f"{settings.deadline + settings.timeout:g} s (timeout × (max_retries + 2)); raise the "
        "provider's timeout if the model is that slow",
    )


def _backoff(retry: int, retry_after: float | None) -> float:
    if retry_after is not None:
        return retry_after
    delay: float = min(INITIAL_BACKOFF * 2**retry, MAX_BACKOFF)
    return delay * (1 - 0.25 * random.random())
