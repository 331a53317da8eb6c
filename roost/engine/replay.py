"""Replay: run a recorded run's flow again against its recorded answers, and compare.

The flow (the one the run was started with, or an edited file) is executed by
the ordinary Runner with two injected sources: providers that answer each call
with the next recorded ``llm_call`` of that provider (its text, tool calls,
reasoning, usage, or its error), and tools that answer with the recorded
``tool_result`` of the same call (``live_tools`` runs the real tools instead).
The person's recorded answers (``resume`` events) and ``retry`` events are fed
back in order, and each event's recorded time is reused so that requests that
show times are built the same. No model is called. The replayed events are
then compared with the recorded ones, ignoring run ids and times: any
difference in a request (its digest), a decision or a message shows up as the
first event that differs.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from roost.engine import recorder as recorder_module
from roost.engine.interpreter import ToolsFor
from roost.engine.runner import Runner
from roost.errors import ProviderError, RoostError
from roost.eventlog import MemoryLog
from roost.events import (
    Event,
    LlmCallEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    event_dict,
)
from roost.flow.models import Flow
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ReasoningPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from roost.providers.base import Provider, TextCallback
from roost.tools.base import Tool, ToolOutcome

# Fields that say where and when an event was written, not what happened.
_IGNORED = ("run", "ts")
_IGNORED_START = ("flow", "parent", "fork_at", "parent_tool_call")


@dataclass(frozen=True, slots=True)
class Difference:
    """The first pair of events that differ; None on a side that has no event there."""

    index: int
    recorded: Event | None
    replayed: Event | None


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What a replay found: identical, or the first difference; and the replayed events."""

    compared: int
    difference: Difference | None
    events: list[Event]
    stopped: str | None = None  # an error that stopped the replay early, if any

    @property
    def identical(self) -> bool:
        return self.difference is None


async def replay_run(
    flow: Flow,
    recorded: Sequence[Event],
    *,
    until: int | None = None,
    live_tools: ToolsFor | None = None,
) -> ReplayReport:
    """Re-executes ``recorded`` with ``flow`` and compares (events up to seq ``until``)."""
    expected = [e for e in recorded if until is None or e.seq <= until]
    run_id = recorded[0].run if recorded else "replay"
    log = MemoryLog(run_id)
    tools = live_tools if live_tools is not None else RecordedTools(flow, recorded)
    runner = Runner(flow, log, providers=RecordedProviders(recorded), tools=tools)
    stopped: str | None = None
    try:
        with recorded_clock(recorded, lambda: runner.state.next_seq):
            await _drive(runner, expected)
    except RoostError as exc:
        stopped = str(exc)
    finally:
        if isinstance(tools, RecordedTools):
            await tools.aclose()
    replayed = log.load()
    if until is not None:
        replayed = [e for e in replayed if e.seq <= until]
    return ReplayReport(len(expected), first_difference(expected, replayed), replayed, stopped)


async def _drive(runner: Runner, recorded: Sequence[Event]) -> None:
    """Starts the run as it was started, then answers and retries as the person did."""
    start = next((e for e in recorded if isinstance(e, MessageEvent)), None)
    if start is None:
        return
    await runner.start(start.content, from_=start.from_, to=start.to)
    for event in recorded:
        if event.seq <= start.seq:
            continue
        if isinstance(event, ResumeEvent):
            if runner.state.status != "paused":
                return  # the replay went elsewhere; the comparison shows where
            await runner.continue_(event.feedback)
        elif isinstance(event, RetryEvent):
            if runner.state.status not in ("error", "running"):
                return
            await runner.retry()


def comparable(event: Event) -> dict[str, Any]:
    """The event without the fields that say where and when it was written."""
    data = event_dict(event)
    for key in _IGNORED:
        data.pop(key, None)
    if isinstance(event, RunStartEvent):
        for key in _IGNORED_START:
            data.pop(key, None)
    return data


def first_difference(recorded: Sequence[Event], replayed: Sequence[Event]) -> Difference | None:
    """The first position where the two lists differ (in content or in length)."""
    for index in range(max(len(recorded), len(replayed))):
        old = recorded[index] if index < len(recorded) else None
        new = replayed[index] if index < len(replayed) else None
        if old is None or new is None or comparable(old) != comparable(new):
            return Difference(index, old, new)
    return None


@contextlib.contextmanager
def recorded_clock(recorded: Sequence[Event], next_seq: Callable[[], int]) -> Iterator[None]:
    """Makes the engine stamp each event with the time recorded for its seq."""
    times = {event.seq: event.ts for event in recorded}
    namespace = vars(recorder_module)
    live: Callable[[], str] = namespace["now_iso"]

    def clock() -> str:
        return times.get(next_seq()) or live()

    # The recorder reads the clock from its module; swapping it there keeps the engine unaware.
    namespace["now_iso"] = clock
    try:
        yield
    finally:
        namespace["now_iso"] = live


# ---------------------------------------------------------------- recorded providers


class ReplayedError(ProviderError):
    """A recorded failed call, failing again with the recorded message."""

    def __init__(self, provider: str, text: str, attempts: tuple[dict[str, Any], ...]) -> None:
        super().__init__(provider, text, attempts=attempts)
        self.args = (text,)

    def __str__(self) -> str:
        return str(self.args[0])


class RecordedProviders:
    """``providers(name)`` for the Runner: each answers from its recorded calls, in order."""

    def __init__(self, recorded: Sequence[Event]) -> None:
        self.calls: dict[str, deque[LlmCallEvent]] = defaultdict(deque)
        for event in recorded:
            if isinstance(event, LlmCallEvent):
                self.calls[event.provider].append(event)
        self._providers: dict[str, RecordedProvider] = {}

    def __call__(self, name: str) -> Provider:
        if name not in self._providers:
            self._providers[name] = RecordedProvider(name, self.calls[name])
        return self._providers[name]


class RecordedProvider:
    """One provider entry replaying its recorded answers."""

    def __init__(self, name: str, calls: deque[LlmCallEvent]) -> None:
        self.name = name
        self.calls = calls
        self.model = calls[0].model if calls else "replay"

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        if not self.calls:
            raise ProviderError(self.name, "replay: no recorded answer left for this call")
        call = self.calls.popleft()
        self.model = call.model
        attempts = tuple(call.attempts)
        if call.error is not None:
            raise ReplayedError(self.name, call.error, attempts)
        response = call.response or {}
        # The record was validated when it was read: build the answer without validating again.
        message = AssistantMessage.model_construct(
            content=response.get("text") or "",
            tool_calls=tuple(
                ToolCall.model_construct(**c) for c in response.get("tool_calls") or ()
            ),
            reasoning=tuple(
                ReasoningPart.model_construct(**r) for r in response.get("reasoning") or ()
            ),
            provider=self.name,
        )
        if on_text is not None and message.content:
            on_text(message.content)
        usage = Usage(**call.usage) if call.usage else Usage(calls=1)
        return ModelResponse.model_construct(
            message=message, usage=usage, model=call.model, provider=self.name, attempts=attempts
        )


# ---------------------------------------------------------------- recorded tools


class RecordedTools:
    """``tools(agent, text)`` for the Runner: the flow's tools, answering from the record.

    The tools' specs come from the flow (so the requests are the same), but a
    call returns the recorded result of the matching recorded call (same
    agent, tool and arguments, in order) instead of running the tool.
    """

    def __init__(self, flow: Flow, recorded: Sequence[Event]) -> None:
        self.calls: dict[tuple[str, str], list[tuple[ToolCallEvent, ToolResultEvent]]] = {}
        for call, result in _pairs(recorded):
            self.calls.setdefault((call.agent, call.name), []).append((call, result))
        self._live: Any = None
        if flow.tools:
            from roost.tools import toolbox_for

            self._live = toolbox_for(flow)

    def __call__(self, agent: str, text: str) -> Sequence[Tool]:
        if self._live is None:
            return []
        tools: Sequence[Tool] = self._live(agent, text)
        return [RecordedTool(tool, agent, self) for tool in tools]

    def answer(self, agent: str, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """The recorded result of the first unanswered recorded call with these arguments."""
        pending = self.calls.get((agent, name), [])
        for index, (call, result) in enumerate(pending):
            if call.arguments == arguments:
                del pending[index]
                return ToolOutcome(result.content, result.is_error, result.child_run)
        return ToolOutcome(f"replay: no recorded result for this call of {name}", is_error=True)

    async def aclose(self) -> None:
        closer = getattr(self._live, "aclose", None)
        if closer is not None:
            await closer()


def _pairs(recorded: Sequence[Event]) -> list[tuple[ToolCallEvent, ToolResultEvent]]:
    """Each recorded tool call with the result that answered it (ids may repeat across turns)."""
    open_calls: dict[str, deque[ToolCallEvent]] = defaultdict(deque)
    pairs: list[tuple[ToolCallEvent, ToolResultEvent]] = []
    for event in recorded:
        if isinstance(event, ToolCallEvent):
            open_calls[event.id].append(event)
        elif isinstance(event, ToolResultEvent) and open_calls[event.id]:
            pairs.append((open_calls[event.id].popleft(), event))
    pairs.sort(key=lambda pair: pair[0].seq)
    return pairs


class RecordedTool:
    """A flow tool whose calls are answered from the record."""

    def __init__(self, tool: Tool, agent: str, source: RecordedTools) -> None:
        self.spec: ToolSpec = tool.spec
        self.direct_output = tool.direct_output
        self.approval = tool.approval
        self.timeout = tool.timeout
        self._agent = agent
        self._source = source

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        return self._source.answer(self._agent, self.spec.name, arguments)
