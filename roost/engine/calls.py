"""One model call as the engine makes it: provider looked up, call made, ``llm_call`` recorded.

A call that fails (after the provider's own retries and fallbacks) records its
``llm_call`` with the error, then an error entry on the route the caller
names, and gives None: the run stops there, waiting for a retry. A caller
that can make the request shorter asks for an ``Overflowed`` instead when the
model found it longer than its context window (no error entry then).

A node with a ``reply_format`` has it sent with each of its requests; its reply
is checked against the schema, asked for again once with the problem named
(a follow-up message after the reply), and recorded as an error entry when
that fails too. A reply that asks for tools is not checked: the tool loop runs
first, and its last answer is the structured one.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from roost.engine.call_records import (
    attempt_records,
    recorded_response,
    response_record,
    usage_record,
)
from roost.engine.digests import RequestDigest, request_digest
from roost.engine.structured import ASK_AGAIN, make_format, reply_problem
from roost.errors import CONTEXT_TOO_LONG
from roost.events import (
    ErrorEvent,
    LlmAttempt,
    LlmCallEvent,
)
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ReplyFormat,
    UserMessage,
)
from roost.providers import limits
from roost.runstate import without_marker

if TYPE_CHECKING:
    from roost.engine.budget import BudgetKeeper
    from roost.engine.recorder import Recorder
    from roost.flow.markers import MarkerRule
    from roost.flow.models import Flow
    from roost.flow.redact import Redactor
    from roost.providers.base import Provider

# request_digest: for the interpreter
__all__ = ["ModelCaller", "error_text", "reply_formats", "request_digest"]

TextSink = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class Overflowed:
    """The model refused the request as longer than its window; ``message`` says so."""

    message: str


@dataclass(frozen=True, slots=True)
class _Failed:
    """What the ``llm_call`` of a failed call records besides the failure itself."""

    node: str
    provider: str
    model: str
    tools: tuple[str, ...]
    digest: str
    purpose: str | None
    waited: float | None


def error_text(exc: BaseException) -> str:
    """A failure as one line: roost's own errors as they are, others with their type."""
    from roost.errors import RoostError

    text = str(exc) if isinstance(exc, RoostError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split()) or type(exc).__name__


def reply_formats(flow: Flow) -> dict[str, ReplyFormat]:
    """The ``reply_format`` of each agent of ``flow`` that has one, as requests send it."""
    formats: dict[str, ReplyFormat] = {}
    for name, agent in flow.agents.items():
        if agent.reply_format:
            formats[name] = make_format(name, dict(agent.reply_format))
    return formats


class _Suffixed(RequestDigest):
    """A digest that covers ``extra`` after the provider's settings: the reply format,
    and for a reply asked for again the follow-up messages."""

    __slots__ = ("_extra", "_inner")

    def __init__(self, inner: RequestDigest, extra: bytes) -> None:
        super().__init__(None, None)
        self._inner = inner
        self._extra = extra

    def finish(self, settings: bytes, *, legacy: bool = False) -> str:
        return self._inner.finish(settings + self._extra, legacy=legacy)


class ModelCaller:
    """Calls a node's provider and records the call."""

    def __init__(
        self,
        recorder: Recorder,
        providers: Callable[[str], Provider],
        redact: Redactor,
        on_text: TextSink | None = None,
        settings: Callable[[str], bytes] | None = None,
        formats: Mapping[str, ReplyFormat] | None = None,
        markers: Callable[[str], MarkerRule] | None = None,
        legacy_digests: Callable[[], bool] | None = None,
    ) -> None:
        self.recorder = recorder
        self.providers = providers
        self.redact = redact
        self.on_text = on_text
        # The settings of a provider entry that shape its requests, for the digest.
        self.settings = settings
        # A replay of a run recorded before the full digest: whether this call was
        # recorded with the old form, to be digested the same way (``Sources``).
        self.legacy_digests = legacy_digests
        # Answers a stopped process recorded but did not act on; a redo uses them first.
        self.recorded: deque[LlmCallEvent] = deque()
        # The reply format of each node that has one (``reply_formats``); most flows: none.
        self.formats: Mapping[str, ReplyFormat] = formats or {}
        # Each node's marker rule: a structured reply is checked with its marker taken off.
        self.markers: Callable[[str], MarkerRule] = markers or (lambda node: "end")
        # The run's budgets; None for a flow without any: nothing is estimated.
        self.budget: BudgetKeeper | None = None

    async def call(
        self,
        node: str,
        provider_name: str,
        request: ModelRequest,
        digest: RequestDigest,
        route: tuple[str, str],
        *,
        keep_calls: bool = True,
    ) -> ModelResponse | None:
        """The provider's answer to a node's request, or None after recording the failure
        as an error entry on ``route``. ``keep_calls=False`` records the answer without
        its tool calls (the last call of a tool loop offers none)."""
        answer = await self._call(node, provider_name, request, digest, route, keep_calls)
        assert not isinstance(answer, Overflowed)  # only call_or_overflow asks for one
        return answer

    async def call_or_overflow(
        self,
        node: str,
        provider_name: str,
        request: ModelRequest,
        digest: RequestDigest,
        route: tuple[str, str],
        *,
        keep_calls: bool = True,
    ) -> ModelResponse | Overflowed | None:
        """``call``, but a request the model found too long gives ``Overflowed`` (the view
        is compressed and the request made again) instead of an error entry."""
        return await self._call(
            node, provider_name, request, digest, route, keep_calls, overflow=True
        )

    async def summary(
        self, node: str, provider_name: str, request: ModelRequest, digest: RequestDigest
    ) -> ModelResponse | None:
        """A summary's answer (written for ``node``, not said by it: nothing is streamed),
        or None after recording the failure as the ``llm_call`` alone."""
        answer = await self._call(
            node, provider_name, request, digest, None, False, purpose="summary"
        )
        assert not isinstance(answer, Overflowed)
        return answer

    async def _call(
        self,
        node: str,
        provider_name: str,
        request: ModelRequest,
        digest: RequestDigest,
        route: tuple[str, str] | None,
        keep_calls: bool,
        *,
        purpose: str | None = None,
        overflow: bool = False,
    ) -> ModelResponse | Overflowed | None:
        """One recorded call; ``route`` None: a failure is recorded as the ``llm_call`` alone."""
        if self.formats and purpose is None and request.reply_format is None:
            reply_format = self.formats.get(node)
            if reply_format is not None:
                return await self._structured(
                    reply_format, node, provider_name, request, digest, route, keep_calls, overflow
                )
        prepared = self._prepare(node, provider_name, request, route)
        if not isinstance(prepared, tuple):
            return prepared  # a replay's recorded answer, or None: no provider
        provider_name, provider = prepared
        # A summary is written for the node, not said by it: nothing of it is streamed.
        on_text = None if purpose else self._text_sink(node)
        names = tuple(tool.name for tool in request.tools) if request.tools else ()
        digested = self._digested(digest, provider_name)
        limited = _turn_waited(provider_name, provider, request)
        try:
            response = await provider.complete(request, on_text=on_text)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if limited is not None:
                limited.failed = True
            failed = _Failed(node, provider_name, str(getattr(provider, "model", "")), names,
                             digested, purpose, limits.recorded_wait(limited))  # fmt: skip
            return self._record_failure(exc, failed, route, overflow, on_text)
        finally:
            if limited is not None:
                limits.end(limited)
        if isinstance(on_text, MaskedStream):
            on_text.flush()
        self.recorder.add_llm_call(
            node, provider_name, response.model or provider.model, names, digested,
            response_record(response, keep_calls=keep_calls), usage_record(response),
            attempt_records(response.attempts), purpose, limits.recorded_wait(limited),
        )  # fmt: skip
        return response

    def _digested(self, digest: RequestDigest, provider_name: str) -> str:
        """The request's digest, over the settings of the provider entry that shape it."""
        settings = self.settings(provider_name) if self.settings else b""
        legacy = self.legacy_digests is not None and self.legacy_digests()
        return digest.finish(settings, legacy=legacy)

    def _prepare(
        self, node: str, provider_name: str, request: ModelRequest, route: tuple[str, str] | None
    ) -> tuple[str, Provider] | ModelResponse | None:
        """Who answers the call, and the provider: the budget may switch it, or stop the
        run (BudgetHalt); a replay's recorded answer instead; None: it cannot be built."""
        self.recorder.flush()
        budget = self.budget
        if budget is not None:  # a provider switched to by a budget answers from then on
            provider_name = budget.provider_for(node, provider_name)
        if self.recorded and (answer := self._replayed(node, provider_name)) is not None:
            return answer
        if budget is not None:  # may stop the run (BudgetHalt) or switch provider
            provider_name = budget.before_call(node, provider_name, request)
        provider = self._provider(provider_name, route)
        return None if provider is None else (provider_name, provider)

    def _replayed(self, node: str, provider_name: str) -> ModelResponse | None:
        """The answer a replay recorded for this call, shown as a live one would be."""
        answer = self._recorded_answer(node, provider_name)
        if answer is not None and self.on_text is not None and answer.message.content:
            self.on_text(node, answer.message.content)
        return answer

    def _provider(self, name: str, route: tuple[str, str] | None) -> Provider | None:
        """The provider ``name``; None, with an error entry on ``route``, when it cannot be
        built (a missing key, say)."""
        try:
            return self.providers(name)
        except Exception as exc:
            if route is not None:
                text = self.redact(error_text(exc))
                self.recorder.add(ErrorEvent, from_=route[0], to=route[1], content=text)
                self.recorder.flush()
            return None

    def _record_failure(
        self,
        exc: Exception,
        failed: _Failed,
        route: tuple[str, str] | None,
        overflow: bool,
        on_text: Callable[[str], None] | None,
    ) -> Overflowed | None:
        """Records a call that failed: its ``llm_call``, and an error entry on ``route``
        (none for a summary's); a request found too long is ``Overflowed`` if asked."""
        if isinstance(on_text, MaskedStream):
            on_text.flush()  # what was streamed before the failure is shown, masked
        rec = self.recorder
        message = self.redact(error_text(exc))
        too_long = bool(getattr(exc, "context_overflow", False))
        attempts = attempt_records(getattr(exc, "attempts", None) or ())
        if too_long and not attempts:  # a provider that keeps none: say why it failed
            attempts = (
                LlmAttempt(provider=failed.provider, model=failed.model, outcome=CONTEXT_TOO_LONG),
            )
        rec.add(
            LlmCallEvent,
            node=failed.node,
            provider=failed.provider,
            model=failed.model,
            tools=failed.tools,
            request_digest=failed.digest,
            error=message,
            attempts=attempts,
            **({"purpose": failed.purpose} if failed.purpose else {}),
            waited=failed.waited,
        )
        if too_long and overflow:
            rec.flush()
            return Overflowed(message)
        if route is not None:
            rec.add(ErrorEvent, from_=route[0], to=route[1], content=message)
        rec.flush()
        return None

    async def _structured(
        self,
        reply_format: ReplyFormat,
        node: str,
        provider_name: str,
        request: ModelRequest,
        digest: RequestDigest,
        route: tuple[str, str] | None,
        keep_calls: bool,
        overflow: bool,
    ) -> ModelResponse | Overflowed | None:
        """``call`` for a node with a reply format: checked, asked again once, else an error."""
        rule = self.markers(node)
        asked = request.model_copy(update={"reply_format": reply_format})
        extra = reply_format.model_dump_json().encode()
        answer = await self._call(
            node, provider_name, asked, _Suffixed(digest, extra), route, keep_calls,
            overflow=overflow,
        )  # fmt: skip
        problem = _problem(reply_format, answer, keep_calls, rule)
        if problem is None:
            return answer
        assert isinstance(answer, ModelResponse)
        follow_up = (
            AssistantMessage(content=answer.message.content, provider=provider_name),
            UserMessage(content=ASK_AGAIN.format(problem=problem)),
        )
        again_request = asked.model_copy(update={"messages": (*request.messages, *follow_up)})
        for message in follow_up:
            extra += b"\x1e" + message.model_dump_json().encode()
        again = await self._call(
            node, provider_name, again_request, _Suffixed(digest, extra), route, keep_calls
        )
        problem = _problem(reply_format, again, keep_calls, rule)
        if problem is None:
            return again
        if route is not None:
            text = f"the reply of {node} does not follow its reply_format, asked twice: {problem}"
            self.recorder.add(ErrorEvent, from_=route[0], to=route[1], content=self.redact(text))
            self.recorder.flush()
        return None

    def _text_sink(self, node: str) -> Callable[[str], None] | None:
        if self.on_text is None:
            return None
        sink = partial(self.on_text, node)
        return MaskedStream(sink, self.redact) if self.redact else sink

    def _recorded_answer(self, node: str, provider_name: str) -> ModelResponse | None:
        """The next recorded answer when it is this node's, through this provider.

        Anything else means the redo went elsewhere: the recorded answers are dropped.
        """
        call = self.recorded[0]
        if call.node != node or call.provider != provider_name:
            self.recorded.clear()
            return None
        self.recorded.popleft()
        return recorded_response(call)


def _turn_waited(
    provider_name: str, provider: Provider, request: ModelRequest
) -> limits.Call | None:
    """The call's turn at the provider's limits, its wait summed from here and the observers
    told at its end; a provider that never takes a turn (no limiter), unobserved, needs
    neither (None)."""
    watched = limits.observers or getattr(provider, "takes_turns", True)
    return limits.begin(provider_name, request) if watched else None


def _problem(
    reply_format: ReplyFormat,
    answer: ModelResponse | Overflowed | None,
    keep_calls: bool,
    rule: MarkerRule,
) -> str | None:
    """What makes ``answer`` fail its format; None when it follows it, asks for tools (the
    loop goes on) or is no answer at all (the failure is recorded already)."""
    if not isinstance(answer, ModelResponse):
        return None
    if answer.message.tool_calls and keep_calls:
        return None
    return reply_problem(reply_format, without_marker(answer.message.content, rule))


class MaskedStream:
    """Streamed text with the flow's secrets masked, as the recorded message will have them.

    A secret may arrive split across chunks, so the last characters that could
    still be the start of one are held back until more text (or the end) comes.
    """

    def __init__(self, sink: Callable[[str], None], redact: Redactor) -> None:
        self._sink = sink
        self._redact = redact
        self._hold = max((len(s) for s in redact.secrets), default=1) - 1
        self._pending = ""

    def __call__(self, chunk: str) -> None:
        raw = self._pending + chunk
        cut = len(raw) - self._hold
        if cut <= 0:
            self._pending = raw
            return
        # Pass on a start that masks as the whole does: never through a secret's middle,
        # where a piece of it would be masked apart (or, too short, not at all).
        whole = self._redact(raw)
        head = raw[:cut]
        # No secret in sight (the common case): any start is as the whole masks it.
        while cut > 0 and whole != raw:
            head = self._redact(raw[:cut])
            if whole.startswith(head) and whole == head + self._redact(raw[cut:]):
                break
            cut -= 1
        self._pending = raw[cut:]
        if cut > 0:
            self._sink(head)

    def flush(self) -> None:
        """Passes on what was held back: the answer is complete."""
        text, self._pending = self._pending, ""
        if text:
            self._sink(self._redact(text))
