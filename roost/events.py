"""The event log's types (docs/events.md).

A run is an append-only list of these. Each event has ``seq`` (0, 1, 2, ...
within its run), ``type``, ``run`` and ``ts`` (ISO 8601, UTC). Field names are
a contract with programs outside roost: they may be added to, never renamed.
``from`` is a Python keyword, so models name the field ``from_`` and
serialise it as ``from``.
"""

from __future__ import annotations

import time as systime
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


def valid_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: surrogate pairs joined, a lone surrogate made U+FFFD.

    Lone surrogates come from bytes that were not UTF-8 (a command-line argument,
    a file name), from a ``\\ud800`` escape in YAML or JSON, or from a model's
    emoji split across two streamed chunks; no log, store or terminal can hold them.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def map_texts(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it (dicts, lists, tuples, models)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_texts(key, change): map_texts(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_texts(item, change) for item in value)
    if isinstance(value, BaseModel):  # a record inside an event: its fields and its extras
        return value.model_copy(update={name: map_texts(item, change) for name, item in value})
    return value


def valid_texts(value: Any) -> Any:
    """``value`` with ``valid_text`` applied to every string inside it."""
    return map_texts(value, valid_text)


# The second last formatted, and its text up to the fraction: one object, so that a
# reader in another thread never pairs one second with another's text.
_formatted: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """The current time as the log and the store write it: ISO 8601 in UTC, fixed width.

    Always six digits of microseconds (``isoformat`` drops a zero fraction, which
    would put 12:00:00Z after 12:00:00.5Z in text order). Made cheaply, as it
    stamps every event: the date and time up to the second are formatted once a
    second; only the microseconds change between the events of a busy run.
    """
    global _formatted
    second, nanos = divmod(systime.time_ns(), 1_000_000_000)
    known, prefix = _formatted
    if second != known:
        prefix = systime.strftime("%Y-%m-%dT%H:%M:%S.", systime.gmtime(second))
        _formatted = (second, prefix)
    return f"{prefix}{nanos // 1000:06d}Z"


def iso_bound(text: str, *, end: bool) -> str:
    """``text``, an ISO date or time, as a fixed-width UTC time with microseconds.

    (Fixed width, as ``now_iso`` writes it, so text order is time order.)

    A date alone is its day's first moment, or its last when it ``end``s a period;
    a time without an offset is UTC. Raises ValueError for anything else (OverflowError
    for a time an offset moves out of the years 1 to 9999).
    """
    text = text.strip()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text)
    else:
        moment = datetime.combine(day, time.max if end else time.min)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _is_none(value: object) -> bool:
    return value is None


# roost's own optional fields (beyond the table of docs/events.md) are left out of the JSON when
# they have no value; the table's fields are always written, as null when empty
# (llm_call's response, usage and error), so a reader can count on every one of them.
def _absent_when_none() -> Any:
    return Field(default=None, exclude_if=_is_none)


class _Event(BaseModel):
    # Unknown fields are kept (extra="allow") so that a log written by a newer roost loads.
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    seq: int
    run: str
    ts: str


class ImageRecord(BaseModel):
    """An image a message carries, by content: ``hash`` (``sha256:<hex>`` of its bytes),
    ``media_type`` and the ``name`` it was given (a file's name or a URL), for people."""

    model_config = ConfigDict(frozen=True, extra="allow")
    hash: str
    media_type: str
    name: str = ""


class BackgroundNote(BaseModel):
    """What a message delivering a background task's result says about the task."""

    model_config = ConfigDict(extra="allow", frozen=True)

    task: str
    child_run: str | None = None
    status: Literal["done", "failed"] = "done"


class RouteRecord(BaseModel):
    """One route of a decision: its target, its condition in short, whether it held."""

    model_config = ConfigDict(extra="allow", frozen=True)

    to: str
    when: str
    held: bool


class MessageEvent(_Event):
    type: Literal["message"] = "message"
    from_: str = Field(alias="from")
    to: str
    content: str
    state: Literal["success"] = "success"
    # The images sent with the message, their bytes kept in the store by hash (images package).
    images: tuple[ImageRecord, ...] | None = _absent_when_none()
    # background delegation: set on the message that delivers a background task's result
    background: BackgroundNote | None = _absent_when_none()
    # routes: the reply's structured data, when its writer has a reply_format
    data: Any = _absent_when_none()


class InterruptEvent(_Event):
    type: Literal["interrupt"] = "interrupt"
    from_: str = Field(alias="from")
    to: str
    state: Literal["interrupt"] = "interrupt"
    # What the person is asked; absent for a plain human turn.
    reason: Literal["human", "manual_select", "tool_approval", "tool_plan", "budget"] | None = (
        _absent_when_none()
    )
    # For tool_approval: {id, name, arguments}.
    tool_call: dict[str, Any] | None = _absent_when_none()
    # routes: for manual_select, the routes that decided the candidates
    routes: tuple[RouteRecord, ...] | None = _absent_when_none()
    # For tool_plan: the calls of one model answer, approved or refused as one.
    tool_calls: tuple[dict[str, Any], ...] | None = _absent_when_none()

    @property
    def content(self) -> str:
        """An interrupt says nothing itself: '' (so every history entry has a content)."""
        return ""


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    from_: str = Field(alias="from")
    to: str
    content: str
    state: Literal["error"] = "error"


class FlowRecord(BaseModel):
    model_config = ConfigDict(frozen=True)
    path: str
    name: str
    hash: str
    text: str


class RunStartEvent(_Event):
    type: Literal["run_start"] = "run_start"
    flow: FlowRecord
    parent: str | None = _absent_when_none()  # the run this one was forked from or called by
    fork_at: int | None = _absent_when_none()
    parent_tool_call: str | None = _absent_when_none()
    # A fork's: the time whose shared memory the fork sees (its first ancestor's fork point).
    memory_at: str | None = _absent_when_none()
    batch: str | None = _absent_when_none()  # the batch (roost batch) this run is a row of
    row: int | None = _absent_when_none()  # that row's line in the batch's inputs


class FlowEvent(_Event):
    """From this event on, the run follows ``flow`` (``--flow FILE`` on continue, retry, fork)."""

    type: Literal["flow"] = "flow"
    flow: FlowRecord


class TerminateEvent(_Event):
    type: Literal["terminate"] = "terminate"
    node: str
    reason: str | None = _absent_when_none()
    # routes: the routes judged when they ended the run
    routes: tuple[RouteRecord, ...] | None = _absent_when_none()


class ResumeEvent(_Event):
    type: Literal["resume"] = "resume"
    from_: str = Field(alias="from")
    to: str
    feedback: str
    # The images sent with the feedback (images package); its message event carries them too.
    images: tuple[ImageRecord, ...] | None = _absent_when_none()


class RetryEvent(_Event):
    type: Literal["retry"] = "retry"
    from_: str = Field(alias="from")
    to: str


class SelectEvent(_Event):
    type: Literal["select"] = "select"
    channel: str
    candidates: tuple[str, ...]
    chosen: str
    by: Literal["llm", "llm_retry", "fallback", "only_candidate", "round_robin", "random", "manual"]
    # routes: each route of the last speaker's entry and whether it held
    routes: tuple[RouteRecord, ...] | None = _absent_when_none()


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    agent: str
    id: str
    name: str
    arguments: dict[str, Any]


class ToolResultEvent(_Event):
    type: Literal["tool_result"] = "tool_result"
    agent: str
    id: str
    name: str
    content: str
    is_error: bool = False
    child_run: str | None = _absent_when_none()  # a sub-flow tool's run
    # budgets: what that child run spent (model_calls, tokens, cost, tool_calls)
    spent: dict[str, float] | None = _absent_when_none()


class _Record(BaseModel):
    # Frozen as the events are; unknown keys are kept (a newer roost's log loads and is
    # written back as it was read).
    model_config = ConfigDict(extra="allow", frozen=True)


class RecordedToolCall(_Record):
    """A tool call in a model's answer, as ``llm_call.response.tool_calls`` records it."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = _absent_when_none()  # the text, when it was not JSON
    provider_details: dict[str, Any] | None = _absent_when_none()


class RecordedReasoning(_Record):
    """Thinking or reasoning in a model's answer (``roost.messages.ReasoningPart``'s fields)."""

    kind: str
    text: str = ""
    signature: str | None = _absent_when_none()
    data: str | None = _absent_when_none()
    id: str | None = _absent_when_none()
    provider_details: dict[str, Any] | None = _absent_when_none()


def _is_empty(value: object) -> bool:
    return not value


class LlmResponse(_Record):
    """What a model answered: text, tool calls, reasoning, and how the answer ended.

    ``finish_reason`` is the API's own word; ``cut`` (the answer reached the
    token limit), ``refused`` and ``notes`` (corrections roost made to what the
    provider reported) are written only when they say something.
    """

    text: str = ""
    tool_calls: tuple[RecordedToolCall, ...] = ()
    reasoning: tuple[RecordedReasoning, ...] = ()
    finish_reason: str | None = _absent_when_none()
    cut: bool = Field(default=False, exclude_if=_is_empty)
    refused: bool = Field(default=False, exclude_if=_is_empty)
    notes: tuple[str, ...] = Field(default=(), exclude_if=_is_empty)


class LlmUsage(_Record):
    """The tokens one model call used, as the provider reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    calls: int = 1


class LlmAttempt(_Record):
    """One request tried for a model call: which provider and model, and how it went.

    ``outcome`` is ``ok``, ``error``, ``http STATUS``, ``connection error`` or the
    failure's kind; ``status`` is the HTTP status when a response came.
    """

    provider: str
    model: str
    outcome: str
    status: int | None = _absent_when_none()


# The purposes of model calls made outside the flow, by a flow test between steps: the
# run's own steps never make them, and a replay carries them over as recorded.
OUTSIDE_CALLS = ("simulated_person", "judge")


class LlmCallEvent(_Event):
    type: Literal["llm_call"] = "llm_call"
    node: str
    provider: str
    model: str
    tools: tuple[str, ...] = ()  # tuples: an event never changes, and holds no list to track
    request_digest: str
    response: LlmResponse | None = None
    usage: LlmUsage | None = None
    error: str | None = None
    attempts: tuple[LlmAttempt, ...] = ()
    # "summary": the call wrote a summary of ``node``'s older turns (a compact event follows).
    # "simulated_person" / "judge": a flow test's simulated person (the call of ``node``, the
    # person's node) or its judge: made outside the flow, between steps (``OUTSIDE_CALLS``).
    purpose: Literal["summary", "simulated_person", "judge"] | None = _absent_when_none()
    # Seconds the call waited for its provider's limits (roost.providers.limits).
    waited: float | None = _absent_when_none()


class CompactEvent(_Event):
    """``node``'s view of its conversation with ``to`` was compressed (never the log itself).

    ``through`` is the last seq the stage covers: ``trim`` cut the long tool results and
    old reasoning of the reply in progress up to it to a note; ``summary`` replaced the
    conversation's entries up to it (all but the first) with ``summary``; ``cut`` left
    them out. ``tokens_before`` and ``tokens_after`` are the request's estimated size.
    """

    type: Literal["compact"] = "compact"
    node: str
    to: str  # whom ``node`` was answering: its conversation is a pair's, or a channel's
    through: int
    stage: Literal["trim", "summary", "cut"]
    summary: str | None = None
    tokens_before: int
    tokens_after: int


class MemoryEntry(_Record):
    """One knowledge entry of a memory: what a model stored under ``key``."""

    key: str
    content: str = ""
    importance: float = 0.5


class TimelineEntry(_Record):
    """One timeline entry: the summary that replaced older messages of a run, and when."""

    at: str  # ISO time the summary was written (the compact event's ts)
    run: str
    summary: str


def memory_entry(arguments: dict[str, Any]) -> MemoryEntry:
    """The entry a ``memory#store`` call's arguments describe (importance 0.5 when not given)."""
    return MemoryEntry(
        key=arguments["key"],
        content=arguments.get("content", ""),
        importance=float(arguments.get("importance", 0.5)),
    )


class MemoryEvent(_Event):
    """``node`` stored, forgot or was reminded of entries of the memory ``scope``.

    ``store`` and ``forget`` carry the ``entry`` (a forgotten one has its key only);
    ``recall`` carries the ``query`` (the latest message) and the ``entries`` found,
    which were added to that message in the request the model was sent;
    ``timeline`` carries the ``timeline`` entry a compaction's summary became.
    """

    type: Literal["memory"] = "memory"
    node: str
    scope: str
    operation: Literal["store", "forget", "recall", "timeline"]
    entry: MemoryEntry | None = _absent_when_none()
    timeline: TimelineEntry | None = _absent_when_none()  # operation timeline: the entry kept
    query: str | None = _absent_when_none()
    entries: tuple[MemoryEntry, ...] | None = _absent_when_none()


# skills: which the run was offered, recorded so a replay offers the same ones ---------


class SkillInfo(_Record):
    """One skill as agents are shown it: its name, its description, and where it was found."""

    name: str
    description: str
    source: str  # "flow" (skills/ beside the flow), a skill_paths entry as written, or "user"


class SkillsEvent(_Event):
    """The skills the flow's agents may use, as found now (recorded when they change).

    The system prompts list them from here, so that a replay or a later step of
    the run shows the same list whatever the folders hold by then.
    """

    type: Literal["skills"] = "skills"
    skills: tuple[SkillInfo, ...]


class HookEvent(_Event):
    """A hook of ``node`` decided on a tool call or on the message ``node`` was about to answer.

    ``stage`` is ``before_tool``, ``after_tool`` or ``before_reply``; ``hook`` names it.
    A tool stage names the call (``tool_call``, its id, and ``name``); ``before_reply``
    names the message's seq (``message``). ``decision``: ``allow``; ``refuse``, with the
    ``reason`` the model is given (a hook that failed refuses with its error);
    ``change``, with the new ``arguments`` (before_tool) or ``content`` (the tool's
    result, or the message as the agent is shown it).
    """

    type: Literal["hook"] = "hook"
    node: str
    stage: Literal["before_tool", "after_tool", "before_reply"]
    hook: str
    decision: Literal["allow", "refuse", "change"]
    tool_call: str | None = _absent_when_none()
    name: str | None = _absent_when_none()
    message: int | None = _absent_when_none()
    reason: str | None = _absent_when_none()
    arguments: dict[str, Any] | None = _absent_when_none()
    content: str | None = _absent_when_none()


class BackgroundEvent(_Event):
    """``agent``'s call ``call`` of the sub-flow tool ``tool`` started background task ``task``.

    The child run ``child_run`` goes on while the run does; its result is delivered
    later as a ``message`` from ``to`` (whom the agent was answering) to ``agent``,
    whose ``background`` field names the task.
    """

    type: Literal["background"] = "background"
    task: str
    agent: str
    to: str
    tool: str
    call: str
    child_run: str


BudgetLimit = Literal["cost", "tokens", "model_calls", "tool_calls", "seconds"]


class BudgetEvent(_Event):
    """A budget's decision: a call or a step that would pass ``limit`` was refused.

    ``spent`` is what the budget's scope (the run, or ``agent``) had spent, ``allowed`` the
    limit; ``action`` is what followed: ``stop`` (a ``terminate`` with reason budget),
    ``ask`` (an interrupt from the node ``budget``), ``switch_to`` (the rest of the run, or
    of the agent, uses ``provider``), or ``raised`` (a new limit, ``allowed``: a person's
    answer, or ``--budget`` from outside, where ``node`` is absent). ``estimate`` is what
    the refused call or tool round would have added; ``node`` whose it was.
    """

    type: Literal["budget"] = "budget"
    limit: BudgetLimit
    spent: float
    allowed: float
    action: Literal["stop", "ask", "switch_to", "raised"]
    agent: str | None = None
    node: str | None = _absent_when_none()
    estimate: float | None = _absent_when_none()
    provider: str | None = _absent_when_none()


Event = Annotated[
    MessageEvent
    | InterruptEvent
    | ErrorEvent
    | RunStartEvent
    | TerminateEvent
    | ResumeEvent
    | RetryEvent
    | SelectEvent
    | ToolCallEvent
    | ToolResultEvent
    | LlmCallEvent
    | FlowEvent
    | CompactEvent
    | MemoryEvent
    | SkillsEvent
    | HookEvent
    | BackgroundEvent
    | BudgetEvent,
    Field(discriminator="type"),
]


@cache
def event_adapter() -> TypeAdapter[Event]:
    """The validator of any one event, built once, when the first event is read back (a
    run that only writes its events never builds it)."""
    return TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """One event from a JSON line or a dict; raises pydantic.ValidationError when malformed."""
    if isinstance(data, dict):
        return event_adapter().validate_python(data)
    return event_adapter().validate_json(data)


def event_json(event: BaseModel) -> str:
    """The event as one JSON line (no newline), ``from`` spelt as in the contract."""
    return event.model_dump_json(by_alias=True)


def event_dict(event: BaseModel) -> dict[str, Any]:
    return event.model_dump(by_alias=True, mode="json")
