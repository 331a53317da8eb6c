"""Translating the OpenAI and Anthropic SDKs' exceptions into ``ProviderError``.

Both SDKs share one exception shape (``APIStatusError`` with ``status_code``
and ``body``, ``APIConnectionError``, ``APITimeoutError``), so one translator
serves both; it is given the SDK module whose classes to match. Every message
names the provider, says what to check and never holds a secret.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from roost.errors import CONTEXT_TOO_LONG, ProviderError
from roost.flow.redact import redact

if TYPE_CHECKING:
    from types import ModuleType

    from roost.providers._common import Settings

# Statuses worth another try once the SDK's own retries are spent (they are
# not: the SDK has done them), and stream error types worth a new request.
RETRYABLE_STREAM_ERRORS = frozenset(
    {"overloaded_error", "api_error", "server_error", "rate_limit_error", "internal_error"}
)


# How servers say a request is longer than the model's context window: OpenAI's code, the
# codes and words of Anthropic, vLLM, llama.cpp, LM Studio and the OpenAI-compatible rest.
_OVERFLOW_CODES = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"}
)
_OVERFLOW_WORDS = re.compile(
    r"prompt is too long|maximum context length|input is too long for|"
    r"context[ _-]?(?:length|window|size|limit)\b[^.]{0,80}?\b(?:exceed|too long|overflow)|"
    r"exceeds?\b[^.]{0,40}?\bcontext[ _-]?(?:length|window|size|limit)",
    re.IGNORECASE,
)


def is_context_overflow(status: int | None, body: object, message: str) -> bool:
    """Whether an error answer says the request did not fit the model's context window."""
    if status is not None and (status < 400 or status >= 500 or status == 429):
        return False  # a rate limit speaks of tokens too, per minute: not the window
    code = _error_code(body)
    return code in _OVERFLOW_CODES or _OVERFLOW_WORDS.search(message) is not None


@dataclass(frozen=True)
class Failure:
    """A translated failure: the error to raise, a short outcome, whether to try again."""

    error: ProviderError
    outcome: str
    retryable: bool
    retry_after: float | None = None


def html_error(settings: Settings, status: int | None = None) -> ProviderError:
    """The server answered with a web page: almost always a wrong base_url."""
    code = f" (HTTP {status})" if status else ""
    return ProviderError(
        settings.name,
        f"{settings.where()} answered with an HTML page instead of the API{code}; check "
        "base_url (OpenAI-compatible servers usually end in /v1)",
    )


class StreamEventError(ProviderError):
    """The server sent an error event (or a failed status) inside a 200 stream."""


class BrokenStreamError(ProviderError):
    """A stream that ended without its final event: the answer may be incomplete."""


def stream_error(settings: Settings, message: str, error_type: str) -> ProviderError:
    """An error event inside a stream; retryable when the server says it was its fault."""
    text = _short(redact(f"the stream failed: {message}", settings.secrets))
    overflow = is_context_overflow(None, {"error": {"code": error_type}}, message)
    return StreamEventError(
        settings.name,
        text,
        retryable=error_type in RETRYABLE_STREAM_ERRORS and not overflow,
        context_overflow=overflow,
    )


def broken_stream(settings: Settings, missing: str) -> BrokenStreamError:
    """The stream ended before ``missing``, the event that says an answer is whole.

    A proxy or server that gives up mid-answer may close the connection
    cleanly; the text so far then looks like a whole answer and must not be
    taken for one. Worth another request, like any broken stream.
    """
    return BrokenStreamError(
        settings.name,
        f"{settings.where()} ended the stream before the answer was complete (no {missing})",
        retryable=True,
    )


def translate(
    exc: BaseException, settings: Settings, sdk: ModuleType, *, streaming: bool
) -> Failure:
    """A Failure for ``exc``; ``streaming`` says the server had begun answering."""
    if isinstance(exc, StreamEventError):
        outcome = CONTEXT_TOO_LONG if exc.context_overflow else "stream error"
        return Failure(exc, outcome, exc.retryable)
    if isinstance(exc, BrokenStreamError):
        return Failure(exc, "broken stream", exc.retryable)
    if isinstance(exc, ProviderError):
        return Failure(exc, "error", exc.retryable)
    if isinstance(exc, sdk.APITimeoutError | httpx2.TimeoutException):
        return Failure(_timeout(settings, streaming), "timeout", retryable=streaming)
    if isinstance(exc, sdk.APIConnectionError | httpx2.TransportError):
        return Failure(_connection(exc, settings, streaming), "connection error", streaming)
    if isinstance(exc, sdk.APIStatusError):
        return _status_failure(exc, settings)
    if isinstance(exc, sdk.APIError):
        body = getattr(exc, "body", None)
        error_type = _error_type(body)
        message = _quote(_server_message(body) or str(exc), settings)
        error = _error(settings, f"the stream failed: {message}")
        if is_context_overflow(None, body, _server_message(body) or str(exc)):
            error.context_overflow = True
            return Failure(error, CONTEXT_TOO_LONG, retryable=False)
        retry = error_type in RETRYABLE_STREAM_ERRORS if error_type else streaming
        return Failure(error, "stream error", retryable=retry)
    error = _error(settings, f"unexpected failure: {type(exc).__name__}: {exc}")
    return Failure(error, f"error {type(exc).__name__}", retryable=False)


def _timeout(settings: Settings, streaming: bool) -> ProviderError:
    if streaming:  # the server answered, then went quiet
        return _error(
            settings,
            f"{settings.where()} stopped sending in the middle of the answer (nothing for "
            f"{settings.timeout:g} s); raise the provider's timeout if the model is that slow",
        )
    return _error(
        settings,
        f"no answer from {settings.where()} within {settings.timeout:g} s; check that the "
        "server is up, or raise the provider's timeout",
    )


def _connection(exc: BaseException, settings: Settings, streaming: bool) -> ProviderError:
    if streaming:  # the server was reached: the connection broke while it answered
        return _error(
            settings,
            f"the connection to {settings.where()} broke off in the middle of the answer "
            f"({_cause(exc, settings)})",
        )
    return _error(
        settings,
        f"cannot reach {settings.where()} ({_cause(exc, settings)}); check base_url and that the "
        "server is running",
    )


def _status_failure(exc: Any, settings: Settings) -> Failure:
    status: int = exc.status_code
    response = getattr(exc, "response", None)
    body = getattr(exc, "body", None)
    if _is_html(response, body):
        return Failure(html_error(settings, status), f"http {status} html", retryable=False)
    if 300 <= status < 400:  # the SDK's client follows no redirect (see client_options)
        return Failure(_redirect(settings, status, response), f"http {status}", retryable=False)
    detail = _quote(_server_message(body) or str(getattr(exc, "message", exc)), settings)
    error_type = _error_type(body)
    if is_context_overflow(status, body, _server_message(body) or str(exc)):
        text = f"the request is longer than the model's context window (HTTP {status}: {detail})"
        error = _error(settings, text)
        error.context_overflow = True
        return Failure(error, CONTEXT_TOO_LONG, retryable=False)
    if status == 200:  # an error event inside a 200 stream
        retry = error_type in RETRYABLE_STREAM_ERRORS
        return Failure(_error(settings, f"the stream failed: {detail}"), "stream error", retry)
    return Failure(
        _error(settings, _status_text(status, detail, settings)),
        f"http {status}",
        retryable=False,
        retry_after=_retry_after(response),
    )


def _redirect(settings: Settings, status: int, response: Any) -> ProviderError:
    target = response.headers.get("location", "") if response is not None else ""
    to = f" to {_quote(target, settings)}" if target else ""
    return _error(
        settings,
        f"{settings.where()} answered with a redirect (HTTP {status}){to}; roost follows none, "
        "so that no conversation is sent where the flow does not say: check base_url",
    )


def _status_text(status: int, detail: str, settings: Settings) -> str:
    if status == 401:
        return f"the server refused the API key (HTTP 401: {detail}); check {settings.key_hint()}"
    if status == 403:
        return f"access denied (HTTP 403: {detail}); check the key's access to {settings.model!r}"
    if status == 404:
        return (
            f"not found (HTTP 404: {detail}); check the model name {settings.model!r} and "
            f"base_url ({settings.where()})"
        )
    if status == 429:
        return f"rate limited (HTTP 429: {detail}) after its retries; wait, or add a fallback"
    if status >= 500:
        return f"server error (HTTP {status}: {detail}) after its retries; try `roost retry` later"
    return f"request refused (HTTP {status}: {detail})"


def _error(settings: Settings, message: str, *, retryable: bool = False) -> ProviderError:
    return ProviderError(settings.name, redact(message, settings.secrets), retryable=retryable)


def _is_html(response: Any, body: object) -> bool:
    content_type = ""
    if response is not None:
        content_type = str(response.headers.get("content-type", ""))
    if "html" in content_type:
        return True
    return isinstance(body, str) and body.lstrip().lower().startswith(("<!doctype", "<html"))


def _server_message(body: object) -> str:
    """The server's own words in an error body, whole: ``_quote`` masks, then shortens."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return str(body)
    if not isinstance(body, dict):
        return ""
    inner = body.get("error", body)
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        return str(inner["message"])
    if isinstance(inner, str):
        return inner
    return json.dumps(body)


def _error_code(body: object) -> str:
    """The ``code`` of an error body (OpenAI's), else its ``type``."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("code") or inner.get("type") or "")
    return ""


def _error_type(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("type") or inner.get("code") or "")
    return ""


def _retry_after(response: Any) -> float | None:
    if response is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = response.headers.get(header)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                return None
    return None


def _cause(exc: BaseException, settings: Settings) -> str:
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return "connection failed"
    return _quote(f"{type(cause).__name__}: {cause}".rstrip(": "), settings)


def _quote(text: str, settings: Settings) -> str:
    """A server's text fit to quote: secrets masked first, then cut to length.

    In that order: cut first, a key straddling the cut would leave its first
    part in the text, too short to be recognised as the key any more.
    """
    return _short(redact(text, settings.secrets))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
