"""What a test scripts the fake LLM server to answer: replies and faults.

A ``Reply`` is neutral: the server renders it in the wire format of whichever
API was called (Chat Completions, Responses or Anthropic Messages), as JSON
or as server-sent events depending on the request's ``stream`` flag. So one
script serves the contract tests of all three backends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class FakeCall:
    """A tool call the fake model makes; ``arguments`` as a str is sent verbatim (may be broken)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Thinking:
    """Reasoning: Anthropic thinking, Chat ``reasoning_content``, a Responses reasoning item.

    ``signature`` is Anthropic's signature or the Responses item's encrypted
    content. ``redacted`` makes an Anthropic ``redacted_thinking`` block whose
    opaque data is ``signature``.
    """

    text: str = ""
    signature: str = "sig-0"
    redacted: bool = False


@dataclass(frozen=True)
class FakeUsage:
    prompt: int = 12
    completion: int = 7
    cached: int = 0
    reasoning: int = 0
    # Prompt tokens written to the cache: Anthropic reports them apart from input_tokens;
    # the OpenAI APIs count them in the prompt and say no more.
    cache_written: int = 0


@dataclass(frozen=True)
class Framing:
    """How a stream is written: the habits of real servers and proxies at the edges.

    ``crlf`` ends every line in ``\\r\\n``; ``comments`` sends ``:`` comment lines
    (a keep-alive ping) before and between events; ``split`` writes each event
    in pieces of that many bytes, flushed one by one (0: whole events), so an
    event, a line or a UTF-8 character arrives across several reads.
    """

    crlf: bool = False
    comments: bool = False
    split: int = 0


@dataclass(frozen=True)
class Reply:
    """One successful answer.

    ``finish`` is the API's own word for why the answer ended, sent as it is:
    Chat ``finish_reason`` (``stop``, ``length``, ``tool_calls``,
    ``content_filter``, ``function_call``), Anthropic ``stop_reason``
    (``end_turn``, ``max_tokens``, ``pause_turn``, ``refusal``, ...), and for
    Responses ``completed`` or the reason of an ``incomplete`` response
    (``max_output_tokens``, ``content_filter``). None: what the content implies.
    ``refusal`` is refusal text where the API has a place for it (Chat's
    ``refusal`` field, a Responses ``refusal`` part; Anthropic: plain text).
    """

    text: str = ""
    calls: tuple[FakeCall, ...] = ()
    thinking: tuple[Thinking, ...] = ()
    usage: FakeUsage = field(default_factory=FakeUsage)
    model: str = ""  # defaults to the model of the request
    chunk_size: int = 4  # characters per streamed text or argument fragment
    # Habits of OpenAI-compatible servers: repeat the id and name on every
    # fragment, give every call index 0, send the whole argument text again.
    repeat_ids: bool = False
    reuse_index: bool = False
    repeat_arguments: bool = False
    split_names: bool = False  # Chat: a tool's name comes in pieces of ``chunk_size``
    finish: str | None = None
    refusal: str = ""
    framing: Framing = field(default_factory=Framing)


@dataclass(frozen=True)
class Status:
    """An HTTP error answer (or any non-streamed body with a content type)."""

    status: int
    message: str = "fake failure"
    error_type: str = "server_error"
    # A short server-directed wait keeps the SDKs' own retries fast in tests.
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "5"})
    body: str | None = None  # sent verbatim instead of the API's error JSON
    content_type: str = "application/json"
    code: str | None = None  # OpenAI's error code (context_length_exceeded, ...)


def html(status: int = 200) -> Status:
    """A web page where an API was expected (a wrong base_url)."""
    page = "<!DOCTYPE html><html><head><title>Welcome</title></head><body>Hi</body></html>"
    return Status(status, body=page, content_type="text/html; charset=utf-8")


def too_long(api: str, tokens: int, window: int) -> Status:
    """The 400 each API answers a request longer than the model's window with."""
    if api == "anthropic":
        return Status(
            400,
            f"prompt is too long: {tokens} tokens > {window} maximum",
            "invalid_request_error",
            headers={},
        )
    if api == "responses":
        message = (
            "Your input exceeds the context window of this model. "
            "Please adjust your input and try again."
        )
    else:
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages."
        )
    return Status(400, message, "invalid_request_error", headers={}, code="context_length_exceeded")


def rate_limited(retry_after: str = "0.01") -> Status:
    return Status(429, "Rate limit reached", "rate_limit_error", {"retry-after": retry_after})


def overloaded() -> Status:
    return Status(529, "Overloaded", "overloaded_error")


@dataclass(frozen=True)
class Broken:
    """A streamed reply that goes wrong after ``after`` events.

    ``how``: ``reset`` closes the connection with a TCP reset, ``close`` closes
    it cleanly (a FIN, as a proxy that gives up does: without a length or
    chunked framing the client sees a stream that simply ends), ``error``
    sends the API's error event inside the 200 stream, ``failed`` ends a
    Responses stream with ``response.failed`` (the others send their error
    event), ``stall`` stops sending for ``seconds`` (past the client's
    timeout) and then closes.
    """

    reply: Reply
    after: int
    how: Literal["reset", "close", "error", "failed", "stall"] = "reset"
    error_type: str = "overloaded_error"
    seconds: float = 3.0


Action = Reply | Status | Broken
