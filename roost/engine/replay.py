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
import itertools
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from roost.engine import recorder as recorder_module
from roost.engine.calls import finish_of
from roost.engine.interpreter import ToolsFor
from roost.engine.runner import Runner
from roost.errors import ProviderError, RoostError
from roost.eventlog import MemoryLog
from roost.events import (
    ErrorEvent,
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
    stops = Stops(stop_points(recorded))
    log = StoppingLog(run_id, stops)
    tools = live_tools if live_tools is not None else RecordedTools(flow, recorded, stops)
    runner = Runner(flow, log, providers=RecordedProviders(recorded, stops), tools=tools)
    stops.next_seq = lambda: runner.state.next_seq
    if isinstance(tools, RecordedTools):
        tools.open_calls = lambda: runner.state.turn.open_calls.values()
    stopped: str | None = None
    try:
        with recorded_clock(recorded, lambda: runner.state.next_seq):
            await _drive(runner, expected, stops)
    except RoostError as exc:
        stopped = str(exc)
    finally:
        closer = getattr(tools, "aclose", None)  # live tools may have MCP servers to stop
        if closer is not None:
            await closer()
    replayed = log.load()
    if until is not None:
        replayed = [e for e in replayed if e.seq <= until]
    return ReplayReport(len(expected), first_difference(expected, replayed), replayed, stopped)


async def _drive(runner: Runner, recorded: Sequence[Event], stops: Stops) -> None:
    """Starts the run as it was started, then answers and retries as the person did."""
    start = next((e for e in recorded if isinstance(e, MessageEvent)), None)
    if start is None:
        return
    stopped = await _step(runner.start(start.content, from_=start.from_, to=start.to))
    for event in recorded:
        if event.seq <= start.seq:
            continue
        if isinstance(event, ResumeEvent):
            if stopped or runner.state.status != "paused":
                return  # the replay went elsewhere; the comparison shows where
            stopped = await _step(runner.continue_(event.feedback))
        elif isinstance(event, RetryEvent):
            if not stopped and runner.state.status != "error":
                return
            if stopped:
                stops.resume()
            stopped = await _step(runner.retry())


async def _step(step: Awaitable[object]) -> bool:
    """Runs one Runner call; True when it ended where the recorded process stopped."""
    try:
        await step
    except ProcessStopped:
        return True
    return False


def stop_points(recorded: Sequence[Event]) -> list[int]:
    """Where the recorded run's process stopped mid-step: a retry not after an error.

    Such a retry follows a process that died (or a fork made mid-step); the
    replay stops at the same event so that the retry redoes the same step.
    """
    points = []
    for before, event in itertools.pairwise(recorded):
        if isinstance(event, RetryEvent) and not isinstance(before, ErrorEvent):
            points.append(event.seq)
    return points


class ProcessStopped(BaseException):
    """The replayed run reached a point where the recorded process had stopped.

    A BaseException, like a cancellation, so that the engine's handlers of a
    failing model or tool let it through instead of recording it as a failure.
    """


class Stops:
    """The seqs where the recorded process stopped, and the replay's position."""

    def __init__(self, points: list[int]) -> None:
        self.points = sorted(points)
        self.next_seq: Callable[[], int] = lambda: 0

    def reached(self, upto: int | None = None) -> int | None:
        """The next stop point when the run is at or past it, else None."""
        position = self.next_seq() if upto is None else upto
        if self.points and position >= self.points[0]:
            return self.points[0]
        return None

    def stop_here(self) -> None:
        """Stops a model or tool call made where the recorded process had stopped."""
        point = self.reached()
        if point is not None:
            raise ProcessStopped(f"stopped before event {point}")

    def resume(self) -> None:
        """Goes past the stop point the run stopped at (its retry is being replayed)."""
        if self.points:
            self.points.pop(0)


class StoppingLog(MemoryLog):
    """A memory log that stops the run where the recorded process stopped."""

    def __init__(self, run_id: str, stops: Stops) -> None:
        super().__init__(run_id)
        self.stops = stops

    def append(self, events: Sequence[Event]) -> None:
        point = self.stops.reached(events[-1].seq) if events else None
        if point is None:
            super().append(events)
            return
        super().append([e for e in events if e.seq < point])
        raise ProcessStopped(f"stopped before event {point}")


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

    def __init__(self, recorded: Sequence[Event], stops: Stops | None = None) -> None:
        self.stops = stops or Stops([])
        self.calls: dict[str, deque[LlmCallEvent]] = defaultdict(deque)
        for event in recorded:
            if isinstance(event, LlmCallEvent):
                self.calls[event.provider].append(event)
        self._providers: dict[str, RecordedProvider] = {}

    def __call__(self, name: str) -> Provider:
        if name not in self._providers:
            self._providers[name] = RecordedProvider(name, self.calls[name], self.stops)
        return self._providers[name]


class RecordedProvider:
    """One provider entry replaying its recorded answers."""

    def __init__(self, name: str, calls: deque[LlmCallEvent], stops: Stops) -> None:
        self.name = name
        self.calls = calls
        self.stops = stops
        self.model = calls[0].model if calls else "replay"

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        self.stops.stop_here()
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
            message=message,
            usage=usage,
            model=call.model,
            provider=self.name,
            attempts=attempts,
            notes=tuple(response.get("notes") or ()),
            **finish_of(response),  # a cut answer is replayed as cut: read for no marker
        )


# ---------------------------------------------------------------- recorded tools


Pair = tuple[ToolCallEvent, ToolResultEvent | None]  # None: no tool answered the call
_STOPPED_CALL = "replay: the recorded process stopped before this call finished"


class RecordedTools:
    """``tools(agent, text)`` for the Runner: the flow's tools, answering from the record.

    The tools' specs come from the flow (so the requests are the same), but a
    call returns the recorded result of the recorded call it replays instead
    of running the tool: the call the run has open at the same seq, or else
    the first unanswered recorded call of the same agent, tool and arguments.
    """

    def __init__(self, flow: Flow, recorded: Sequence[Event], stops: Stops | None = None) -> None:
        self.stops = stops or Stops([])
        self.open_calls: Callable[[], Iterable[ToolCallEvent]] = lambda: ()
        self.by_seq: dict[int, Pair] = {
            call.seq: (call, result) for call, result in _pairs(recorded)
        }
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
        """The recorded result of the recorded call this call replays."""
        key = (agent, name, arguments)
        in_flight = sorted(
            c.seq for c in self.open_calls() if (c.agent, c.name, c.arguments) == key
        )
        candidates = [seq for seq in in_flight if seq in self.by_seq]
        candidates += [
            seq for seq, (call, result) in sorted(self.by_seq.items())
            if result is not None and (call.agent, call.name, call.arguments) == key
        ]  # fmt: skip
        if not candidates:
            return ToolOutcome(f"replay: no recorded result for this call of {name}", True)
        _, result = self.by_seq.pop(candidates[0])
        if result is None:
            return ToolOutcome(_STOPPED_CALL, is_error=True)
        return ToolOutcome(result.content, result.is_error, result.child_run)

    async def aclose(self) -> None:
        closer = getattr(self._live, "aclose", None)
        if closer is not None:
            await closer()


def _pairs(recorded: Sequence[Event]) -> list[Pair]:
    """Each recorded tool call with the result its tool gave (ids may repeat across turns).

    The results right after a retry close calls a stopped process left open;
    no tool gave them (None).
    """
    open_calls: dict[str, deque[ToolCallEvent]] = defaultdict(deque)
    pairs: list[Pair] = []
    closing = False
    for event in recorded:
        if isinstance(event, ToolCallEvent):
            open_calls[event.id].append(event)
        elif isinstance(event, ToolResultEvent) and open_calls[event.id]:
            pairs.append((open_calls[event.id].popleft(), None if closing else event))
            continue
        closing = isinstance(event, RetryEvent)
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
        self._source.stops.stop_here()
        return self._source.answer(self._agent, self.spec.name, arguments)
