"""The event log's types (docs/events.md), one model per ``type``, and ``Event``, their union.

Field names are a contract with programs outside roost: they may be added to,
never renamed. ``from`` is a Python keyword, so models name the field ``from_``
and serialise it as ``from``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from roost.events._records import (
    BackgroundNote,
    FlowRecord,
    ImageRecord,
    LlmAttempt,
    LlmResponse,
    LlmUsage,
    MemoryEntry,
    RouteRecord,
    SkillInfo,
    TimelineEntry,
    absent_when_none,
)


class _Event(BaseModel):
    # Unknown fields are kept (extra="allow") so that a log written by a newer roost loads.
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    seq: int
    run: str
    ts: str


class MessageEvent(_Event):
    type: Literal["message"] = "message"
    from_: str = Field(alias="from")
    to: str
    content: str
    state: Literal["success"] = "success"
    # The images sent with the message, their bytes kept in the store by hash (images package).
    images: tuple[ImageRecord, ...] | None = absent_when_none()
    # background delegation: set on the message that delivers a background task's result
    background: BackgroundNote | None = absent_when_none()
    # routes: the reply's structured data, when its writer has a reply_format
    data: Any = absent_when_none()


class InterruptEvent(_Event):
    type: Literal["interrupt"] = "interrupt"
    from_: str = Field(alias="from")
    to: str
    state: Literal["interrupt"] = "interrupt"
    # What the person is asked; absent for a plain human turn.
    reason: Literal["human", "manual_select", "tool_approval", "tool_plan", "budget"] | None = (
        absent_when_none()
    )
    # For tool_approval: {id, name, arguments}.
    tool_call: dict[str, Any] | None = absent_when_none()
    # routes: for manual_select, the routes that decided the candidates
    routes: tuple[RouteRecord, ...] | None = absent_when_none()
    # For tool_plan: the calls of one model answer, approved or refused as one.
    tool_calls: tuple[dict[str, Any], ...] | None = absent_when_none()

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


class RunStartEvent(_Event):
    type: Literal["run_start"] = "run_start"
    flow: FlowRecord
    parent: str | None = absent_when_none()  # the run this one was forked from or called by
    fork_at: int | None = absent_when_none()
    parent_tool_call: str | None = absent_when_none()
    # A fork's: the time whose shared memory the fork sees (its first ancestor's fork point).
    memory_at: str | None = absent_when_none()
    batch: str | None = absent_when_none()  # the batch (roost batch) this run is a row of
    row: int | None = absent_when_none()  # that row's line in the batch's inputs


class FlowEvent(_Event):
    """From this event on, the run follows ``flow`` (``--flow FILE`` on continue, retry, fork)."""

    type: Literal["flow"] = "flow"
    flow: FlowRecord


class TerminateEvent(_Event):
    type: Literal["terminate"] = "terminate"
    node: str
    reason: str | None = absent_when_none()
    # routes: the routes judged when they ended the run
    routes: tuple[RouteRecord, ...] | None = absent_when_none()


class ResumeEvent(_Event):
    type: Literal["resume"] = "resume"
    from_: str = Field(alias="from")
    to: str
    feedback: str
    # The images sent with the feedback (images package); its message event carries them too.
    images: tuple[ImageRecord, ...] | None = absent_when_none()


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
    routes: tuple[RouteRecord, ...] | None = absent_when_none()


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
    child_run: str | None = absent_when_none()  # a sub-flow tool's run
    # budgets: what that child run spent (model_calls, tokens, cost, tool_calls)
    spent: dict[str, float] | None = absent_when_none()


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
    purpose: Literal["summary", "simulated_person", "judge"] | None = absent_when_none()
    # Seconds the call waited for its provider's limits (roost.providers.limits).
    waited: float | None = absent_when_none()


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
    entry: MemoryEntry | None = absent_when_none()
    timeline: TimelineEntry | None = absent_when_none()  # operation timeline: the entry kept
    query: str | None = absent_when_none()
    entries: tuple[MemoryEntry, ...] | None = absent_when_none()


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
    tool_call: str | None = absent_when_none()
    name: str | None = absent_when_none()
    message: int | None = absent_when_none()
    reason: str | None = absent_when_none()
    arguments: dict[str, Any] | None = absent_when_none()
    content: str | None = absent_when_none()


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
    node: str | None = absent_when_none()
    estimate: float | None = absent_when_none()
    provider: str | None = absent_when_none()


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


def nodes_named(event: Event) -> tuple[str, ...]:
    """The nodes ``event`` took place between or at: what the history and the drawings read.

    Both ends of a message, a pause, an error, a resume or a retry; a director's
    channel and its choice; the agent of a tool call or result; the node of a model
    call, a hook or an end. Other events name none.
    """
    match event:
        case MessageEvent() | InterruptEvent() | ErrorEvent() | ResumeEvent() | RetryEvent():
            return (event.from_, event.to)
        case SelectEvent():
            return (event.channel, event.chosen)
        case ToolCallEvent() | ToolResultEvent():
            return (event.agent,)
        case LlmCallEvent() | HookEvent() | TerminateEvent():
            return (event.node,)
        case _:
            return ()
