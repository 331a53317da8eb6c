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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from roost.engine.digests import RequestDigest, request_digest
from roost.engine.recorder import Recorder, build_event, build_whole
from roost.engine.structured import ASK_AGAIN, make_format, reply_problem
from roost.errors import CONTEXT_TOO_LONG
from roost.events import (
    ErrorEvent,
    LlmAttempt,
    LlmCallEvent,
    LlmResponse,
    LlmUsage,
    RecordedReasoning,
    RecordedToolCall,
)
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ReplyFormat,
    ToolCall,
    UserMessage,
    distinct_ids,
)
from roost.providers import limits
from roost.runstate import assistant_message, without_marker

if TYPE_CHECKING:
    from roost.engine.budget import BudgetKeeper
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
        super().__init__(None)
        self._inner = inner
        self._extra = extra

    def finish(self, settings: bytes) -> str:
        return self._inner.finish(settings + self._extra)


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
    ) -> None:
        self.recorder = recorder
        self.providers = providers
        self.redact = redact
        self.on_text = on_text
        # The settings of a provider entry that shape its requests, for the digest.
        self.settings = settings
        # Answers a stopped process recorded but did not act on; a redo uses them first.
        self.recorded: deque[LlmCallEvent] = deque()
        self.last_cut = False  # the latest answer stopped at the token limit
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
        route: tuple[str, str] | None,
        *,
        keep_calls: bool = True,
        purpose: str | None = None,
        overflow: bool = False,
    ) -> ModelResponse | Overflowed | None:
        """The provider's answer, or None after recording the failure on ``route``.

        ``keep_calls=False`` records the answer without its tool calls (the last call
        of a tool loop offers none). ``route`` None records a failure as the ``llm_call``
        alone (a summary's). ``overflow=True``: a request the model found too long gives
        ``Overflowed`` instead of an error entry. ``purpose`` is recorded."""
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
        digested = digest.finish(self.settings(provider_name) if self.settings else b"")
        # Waits for the provider's limits are summed from here, and the observers told at
        # the end; a provider that never takes a turn (no limiter), unobserved, needs neither.
        watched = limits.observers or getattr(provider, "takes_turns", True)
        limited = limits.begin(provider_name, request) if watched else None
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
        self.last_cut = response.cut
        self.recorder.add_llm_call(
            node, provider_name, response.model or provider.model, names, digested,
            response_record(response, keep_calls=keep_calls), usage_record(response),
            attempt_records(response.attempts), purpose, limits.recorded_wait(limited),
        )  # fmt: skip
        return response

    def _prepare(
        self, node: str, provider_name: str, request: ModelRequest, route: tuple[str, str] | None
    ) -> tuple[str, Provider] | ModelResponse | None:
        """Who answers the call, and the provider: the budget may switch it, or stop the
        run (BudgetHalt); a replay's recorded answer instead; None: it cannot be built."""
        self.recorder.flush()
        self.last_cut = False
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
        if answer is not None:
            self.last_cut = answer.cut
            if self.on_text is not None and answer.message.content:
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
        answer = await self.call(
            node, provider_name, asked, _Suffixed(digest, extra), route,
            keep_calls=keep_calls, overflow=overflow,
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
        again = await self.call(
            node, provider_name, again_request, _Suffixed(digest, extra), route,
            keep_calls=keep_calls,
        )  # fmt: skip
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


def recorded_response(call: LlmCallEvent) -> ModelResponse:
    """The text answer an ``llm_call`` event records, as the provider gave it."""
    message = assistant_message(call.response or LlmResponse(), call.provider, with_calls=False)
    finish = finish_of(call.response)
    return ModelResponse(message=message, model=call.model, provider=call.provider, **finish)


def response_record(response: ModelResponse, *, keep_calls: bool) -> LlmResponse:
    """The ``response`` field of an llm_call: text, tool calls and reasoning, how it ended.

    Both are frozen, so an answer handed out again at once (a scripted provider's
    repeated reply) gets the record made the first time.
    """
    global _last
    answer, kept, record = _last
    if answer is response and kept == keep_calls:
        return record
    record = _response_record(response, keep_calls)
    _last = (response, keep_calls, record)  # the answer held, so its record stays its own
    return record


_last: tuple[ModelResponse | None, bool, LlmResponse] = (None, False, LlmResponse())


def _response_record(response: ModelResponse, keep_calls: bool) -> LlmResponse:
    message = response.message
    # Recorded with an id each, so each call is asked about, run and recorded on its own.
    calls, reasoning = distinct_ids(message.tool_calls), message.reasoning
    # Built without validating again (the values come from a validated ModelResponse),
    # every field written out: this runs once per model call. Most answers have neither
    # calls nor reasoning; tuples, as in every event: an answer without them then holds
    # no container, so neither it nor its event is left for the garbage collector to track.
    return build_whole(
        LlmResponse,
        {
            "text": message.content,
            "tool_calls": tuple(_call_record(c) for c in calls) if calls and keep_calls else (),
            "reasoning": tuple(
                build_event(RecordedReasoning, part.model_dump(exclude_none=True))
                for part in reasoning
            )
            if reasoning
            else (),
            "finish_reason": response.finish_reason,
            # Written only when they say something: most answers end by themselves.
            "cut": response.cut,
            "refused": response.refused,
            "notes": tuple(response.notes),
        },
    )


def finish_of(response: LlmResponse | None) -> dict[str, Any]:
    """The finish fields of a recorded ``response``, as ``ModelResponse`` takes them."""
    if response is None:
        return {}
    return {
        "finish_reason": response.finish_reason,
        "cut": response.cut,
        "refused": response.refused,
    }


def _call_record(call: ToolCall) -> RecordedToolCall:
    record: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.raw_arguments is not None:
        record["raw_arguments"] = call.raw_arguments
    if call.provider_details is not None:
        record["provider_details"] = call.provider_details
    return build_event(RecordedToolCall, record)


def usage_record(response: ModelResponse) -> LlmUsage:
    """Token counts of the call (zeros when the provider counted none, as scripted ones)."""
    usage = response.usage
    key = (
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_tokens,
        usage.reasoning_tokens,
    )
    record = _USAGES.get(key)
    if record is None:
        # Records are frozen: calls that used the same tokens share one (every scripted call).
        if len(_USAGES) >= 256:
            _USAGES.clear()
        prompt, completion, cached, reasoning = key
        fields = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cached_tokens": cached,
            "reasoning_tokens": reasoning,
            "calls": 1,
        }
        record = _USAGES[key] = build_whole(LlmUsage, fields)
    return record


_USAGES: dict[tuple[int, int, int, int], LlmUsage] = {}


def attempt_records(attempts: Sequence[dict[str, Any]]) -> tuple[LlmAttempt, ...]:
    """The attempts a provider reports (provider, model, outcome, status), as records."""
    if not attempts:  # a scripted provider reports none
        return ()
    return tuple(LlmAttempt.model_validate(attempt) for attempt in attempts)
