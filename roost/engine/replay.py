"""Replay: run a recorded run's flow again against its recorded answers, and compare.

Each part of the run is executed under the flow in force there (the one its
``run_start`` records, then the one each ``flow`` event names), or every part
under one edited file, by the ordinary Runner with two injected sources:
providers that answer each call with the next recorded ``llm_call`` of that
provider (its text, tool calls, reasoning, usage, or its error), and tools
that answer with the recorded ``tool_result`` of the same call (see
``replay_tools``: nothing the flow names is started or imported;
``live_tools`` runs the real tools instead). The person's recorded answers
(``resume`` events) and ``retry`` events are fed back in order, and each
event's recorded time is reused so that requests that show times are built
the same. No model is called. The replayed events are then compared with the
recorded ones, ignoring run ids and times: any difference in a request (its
digest), a decision or a message shows up as the first event that differs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roost.engine.child_runs import ChildRuns
from roost.engine.defaults import default_toolbox
from roost.engine.flows import flow_record
from roost.engine.recorded import (
    ProcessStopped,
    RecordedProviders,
    StoppingLog,
    Stops,
    recorded_sources,
)
from roost.engine.runner import CANCELLED, Runner
from roost.errors import EventLogError, RoostError
from roost.events import (
    OUTSIDE_CALLS,
    BudgetEvent,
    CompactEvent,
    ErrorEvent,
    Event,
    FlowEvent,
    FlowRecord,
    LlmCallEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    ToolResultEvent,
    event_dict,
)
from roost.runstate import fold

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence

    from roost.engine._replies import ToolsFor
    from roost.engine.sources import RunPosition, Sources
    from roost.flow.models import Flow
    from roost.messages import ModelRequest
    from roost.ports import ImageStore

# Fields that say where and when an event was written, not what happened.
_IGNORED = ("run", "ts", "waited")  # a wait for a provider's limits is not the run's doing
# A flow record is compared by the events made under it, not by its text: so a
# replay with an edited file still compares the run's events.
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
    request: ModelRequest | None = None  # the request made at seq ``capture``, if asked
    settings: str = ""  # the settings of that request's provider (``request_settings``)
    unfinished: bool = False  # the run's last step never finished: compared up to its end

    @property
    def identical(self) -> bool:
        return self.difference is None


async def replay_run(
    flow: Flow | None,
    recorded: Sequence[Event],
    *,
    until: int | None = None,
    live_tools: ToolsFor | bool | None = None,
    capture: int | None = None,
    images: ImageStore | None = None,
) -> ReplayReport:
    """Re-executes ``recorded`` and compares (the events up to seq ``until``).

    ``flow`` None replays each part under its recorded flow; a Flow replays
    every part under it. ``live_tools`` runs real tools (True: those of the
    flow in force). ``capture`` keeps the model request made at that seq.
    ``images`` is the store the run's images were kept in: requests that show
    them read them again from there.
    """
    expected = [e for e in recorded if until is None or e.seq <= until]
    flows = PartFlows(recorded, flow)
    # A run whose process stopped mid-step, never retried, is replayed up to its last
    # event: the step it left unfinished is not made again past the record's end.
    unfinished = until is None and ends_unfinished(recorded)
    end = [recorded[-1].seq + 1] if unfinished else []
    stops = Stops(stop_points(recorded) + end, cancel_points(recorded))
    first = flows.first()
    log = _started_log(recorded, stops, first)
    runner, sources = _recorded_runner(recorded, first, log, stops, capture, live_tools, images)
    providers = sources.providers
    assert isinstance(providers, RecordedProviders)
    stopped: str | None = None
    try:
        await _drive(runner, expected, stops, flows)
    except RoostError as exc:
        stopped = str(exc)
    finally:
        closer = getattr(sources.tools, "aclose", None)  # live tools may have MCP servers to stop
        if closer is not None:
            await closer()
    replayed = [e for e in log.load() if until is None or e.seq <= until]
    return ReplayReport(
        len(expected),
        first_difference(expected, replayed),
        replayed,
        stopped,
        providers.captured,
        providers.captured_settings,
        unfinished=unfinished,
    )


def _started_log(recorded: Sequence[Event], stops: Stops, first: Flow) -> StoppingLog:
    """The replay's log, its run_start carried over from the record naming the flow replayed
    (not re-made; so a flow event recorded before the start message is replayed in its place)."""
    log = StoppingLog(recorded[0].run if recorded else "replay", stops)
    start = recorded[0] if recorded and isinstance(recorded[0], RunStartEvent) else None
    if start is not None:
        log.append([start.model_copy(update={"flow": flow_record(first)})])
    return log


def _recorded_runner(
    recorded: Sequence[Event],
    first: Flow,
    log: StoppingLog,
    stops: Stops,
    capture: int | None,
    live_tools: ToolsFor | bool | None,
    images: ImageStore | None,
) -> tuple[Runner, Sources]:
    """A Runner whose every source answers from the record (tools live if asked)."""
    tools: ToolsFor | None = None
    if live_tools is True:
        tools = LiveTools()
    elif live_tools:
        tools = live_tools
    sources = recorded_sources(recorded, stops, capture=capture, tools=tools, images=images)
    runner = Runner(flow=first, log=log, sources=sources)
    stops.bind(runner)
    return runner, sources


def ends_unfinished(recorded: Sequence[Event]) -> bool:
    """Whether the run's last step never finished: its process stopped mid-step (killed
    during a model or tool call) and the run was not retried after."""
    return bool(recorded) and fold(recorded).status == "running"


class PartFlows:
    """The flow each part of a recorded run is replayed under.

    Without an edited ``flow``, each recorded flow is loaded again from its
    text, as the flow language only: the tools it names are neither imported
    nor started.
    """

    def __init__(self, recorded: Sequence[Event], flow: Flow | None) -> None:
        self.flow = flow
        self._loaded: dict[str, Flow] = {}
        self._start = recorded[0] if recorded and isinstance(recorded[0], RunStartEvent) else None
        if flow is None and self._start is None:
            raise EventLogError("the run has no run_start event: no flow to replay it with")

    def first(self) -> Flow:
        if self.flow is not None:
            return self.flow
        assert self._start is not None
        return self.of(self._start.flow)

    def of(self, record: FlowRecord) -> Flow:
        """The flow that a ``flow`` event (or run_start) with ``record`` replays under."""
        if self.flow is not None:
            return self.flow
        if record.hash not in self._loaded:
            from roost.flow import load_recorded_flow

            # Read as the run recorded it: your environment decides nothing in it.
            self._loaded[record.hash] = load_recorded_flow(record.text, record.path)
        return self._loaded[record.hash]


async def _drive(runner: Runner, recorded: Sequence[Event], stops: Stops, flows: PartFlows) -> None:
    """Starts the run as it was started, then answers and retries as the person did."""
    start = next((e for e in recorded if isinstance(e, MessageEvent)), None)
    if start is None:
        return
    for event in recorded:
        if isinstance(event, FlowEvent) and event.seq < start.seq:
            runner.follow(flows.of(event.flow))  # a fork at 1 that took another flow
        elif _set_outside(event) and event.seq < start.seq:
            _budget_again(runner, event)
    images = start.images or ()  # the recorded ones, never the flow's own start.images
    stopped = await _step(
        runner.start(start.content, from_=start.from_, to=start.to, images=images)
    )
    for event in recorded:
        if event.seq <= start.seq:
            continue
        if isinstance(event, FlowEvent):
            runner.follow(flows.of(event.flow))  # written before the step it precedes
        elif _set_outside(event):
            _budget_again(runner, event)  # --budget on continue: recorded before its step
        elif isinstance(event, ResumeEvent):
            if stopped or runner.state.status != "paused":
                return  # the replay went elsewhere; the comparison shows where
            stopped = await _step(runner.continue_(event.feedback, images=event.images or ()))
        elif isinstance(event, RetryEvent):
            if not stopped and runner.state.status != "error":
                return
            if stopped:
                stops.resume()
            stopped = await _step(runner.retry())
        elif isinstance(event, LlmCallEvent) and event.purpose in OUTSIDE_CALLS:
            if stopped or event.seq != runner.state.next_seq:
                return  # the replay went elsewhere; the comparison shows where
            await runner.note(event)  # a flow test's judge or simulated person, as recorded
        elif _compacted_between_steps(event, runner.state.next_seq, stopped):
            stopped = await _step(runner.compact())  # a person's /compact, done again


def _set_outside(event: Event) -> bool:
    """Whether ``event`` is a limit set from outside the run (``--budget``): no node's."""
    return isinstance(event, BudgetEvent) and event.action == "raised" and event.node is None


def _budget_again(runner: Runner, event: Event) -> None:
    """Sets the limit a recorded ``--budget`` set, for the step it was recorded with."""
    assert isinstance(event, BudgetEvent)
    runner.set_budget(event.allowed, event.limit)


def _compacted_between_steps(event: Event, next_seq: int, stopped: bool) -> bool:
    """Whether ``event`` begins a compaction made between two steps (``roost chat``'s
    /compact): a summary's call or a compaction where the replayed step has ended."""
    if stopped or event.seq != next_seq:
        return False
    summary = isinstance(event, LlmCallEvent) and event.purpose == "summary"
    return summary or isinstance(event, CompactEvent)


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
    replay stops at the same event so that the retry redoes the same step. A
    ``flow`` event written with the retry belongs to it: the stop is before it.
    """
    points = []
    taking_over: int | None = None  # the seq of flow events right before this one
    for before, event in itertools.pairwise(recorded):
        if isinstance(event, FlowEvent):
            if not isinstance(before, FlowEvent):
                taking_over = event.seq if not isinstance(before, ErrorEvent) else None
            continue
        if isinstance(event, RetryEvent) and not isinstance(before, ErrorEvent | FlowEvent):
            points.append(event.seq)
        elif isinstance(event, RetryEvent) and isinstance(before, FlowEvent) and taking_over:
            points.append(taking_over)
        taking_over = None
    return points


def cancel_points(recorded: Sequence[Event]) -> list[int]:
    """Where a recorded step was cancelled (``runner.cancel()``: ``/stop`` in ``roost chat``,
    a cancel through ``roost serve``): the seq of the first event the cancel recorded,
    the cancelled result of a tool call it stopped or else its error entry."""
    by_seq = {event.seq: event for event in recorded}
    points = []
    for event in recorded:
        if isinstance(event, ErrorEvent) and event.content == CANCELLED:
            seq = event.seq
            while _cancelled_result(by_seq.get(seq - 1)):
                seq -= 1
            points.append(seq)
    return points


def _cancelled_result(event: Event | None) -> bool:
    return isinstance(event, ToolResultEvent) and event.is_error and event.content == CANCELLED


def comparable(event: Event) -> dict[str, Any]:
    """The event without the fields that say where and when it was written."""
    data = event_dict(event)
    for key in _IGNORED:
        data.pop(key, None)
    if isinstance(event, RunStartEvent | FlowEvent):
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


class LiveTools:
    """``tools(agent, text)`` running the real tools of the flow in force (``--live-tools``)."""

    def __init__(self) -> None:
        self._run: RunPosition | None = None
        self._boxes: dict[int, Any] = {}

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def __call__(self, agent: str, text: str) -> Sequence[Any]:
        assert self._run is not None, "bound by the Runner it serves"
        flow = self._run.flow
        box = self._boxes.get(id(flow))
        if box is None:
            # Sub-flows run too, as child runs of their own on logs kept in memory.
            box = self._boxes[id(flow)] = default_toolbox(flow, ChildRuns(Runner))
        tools: Sequence[Any] = box(agent, text)
        return tools

    async def aclose(self) -> None:
        for box in self._boxes.values():
            await box.aclose()
