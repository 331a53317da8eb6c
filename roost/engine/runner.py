"""The Python API: ``Runner(flow, log)`` starts, continues and retries a run.

The Runner owns the run's state (folded from the log once, then kept current
by applying each event it records), the providers (built lazily, positioned
from the state) and the tools (imported only when the flow has any); which
providers and tools those are by default, ``roost.engine.defaults`` decides.
It never prompts a person: a paused run waits for ``continue_``. ``ChildRuns``
runs ``flow:`` tools as child runs; the Runner hands one to its toolbox, with
the Runner's ``BackgroundTasks``, which keeps the child runs of background
tasks going across calls (a replay passes ``background=`` to deliver their
results from the record instead).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from roost.engine._call_cursors import Calls, Cursor
from roost.engine.background import BackgroundSource, BackgroundTasks
from roost.engine.calls import ModelCaller, TextSink, reply_formats
from roost.engine.child_runs import ChildLogs, ChildRuns
from roost.engine.defaults import default_provider, default_toolbox
from roost.engine.digests import settings_of
from roost.engine.flows import check_keeps_history, flow_record, text_hash
from roost.engine.fork_memory import fork_view
from roost.engine.hooks import LiveHooks
from roost.engine.images import LoadedImage, image_source, keep, start_images_async
from roost.engine.interpreter import Interpreter
from roost.engine.recorder import Clock, Recorder
from roost.engine.sources import Sources
from roost.events import (
    BackgroundEvent,
    ErrorEvent,
    Event,
    FlowEvent,
    FlowRecord,
    ImageRecord,
    LlmCallEvent,
    now_iso,
)
from roost.flow.redact import Redactor
from roost.ports import EventLog, ImageStore, MemoryImages, MemoryLog
from roost.runstate import RunState, fold

if TYPE_CHECKING:  # roost.tools is imported only by flows that have tools
    from roost.flow.models import Flow
    from roost.providers.base import Provider
    from roost.tools.base import Tool, ToolOutcome
    from roost.tools.toolbox import Toolbox

EventSink = Callable[[Event], None]
# What a cancelled step records: the error entry, and the result of each tool call it stopped.
CANCELLED = "cancelled: the step was stopped before it finished; retry to redo it"


class Runner:
    """Runs one flow against one event log."""

    def __init__(
        self,
        *,
        flow: Flow,
        log: EventLog,
        sources: Sources | None = None,
        child_log: ChildLogs | None = None,
        on_event: EventSink | None = None,
        on_text: TextSink | None = None,
        budget: float | Mapping[str, float] | None = None,
    ) -> None:
        sources = sources or Sources()
        self.flow = flow
        self.log = log
        self.on_event = on_event
        self.on_text = on_text
        self.child_log: ChildLogs = child_log or MemoryLog
        # Limits set from outside (--budget COST, or a parent's for its sub-flow), recorded
        # at the next step.
        self._budget_set: Mapping[str, float] | None = (
            {"cost": budget} if isinstance(budget, int | float) else budget
        )
        self._take_sources(sources)
        self._providers: dict[str, Provider] = {}
        self._toolbox: Toolbox | None = None  # the default toolbox, when this runner made one
        self._queues: list[asyncio.Queue[Event | None]] = []
        self._lock = asyncio.Lock()
        self._calls = Calls()
        self._stale = False
        self._step_task: asyncio.Task[Any] | None = None  # the task running a step now
        self._cancelling = False  # cancel() stopped that task: record it, do not raise
        events = log.load()
        self._state = fold(events)
        self._own_background: BackgroundTasks | None = None
        self.background: BackgroundSource = sources.background or self._background_of_its_own()
        # Where memory#... tools and recall keep and find entries; a fork reads the
        # memory of its fork point and writes only its own events.
        self.memory = fork_view(sources.memory, self._state)
        # A flow other than the one the log says is in force takes over with a ``flow``
        # event, written before the next step, so that the log keeps telling the truth.
        self._takes_over: Flow | None = None
        if self._state.flow_hash and self._state.flow_hash != text_hash(flow.text):
            check_keeps_history(flow, events)
            self._takes_over = flow
        self._build(flow)
        sources.bind(self)  # the recorded sources read where the run stands from here

    def _take_sources(self, sources: Sources) -> None:
        """Keeps what the run asks its sources for; None stays the live default."""
        self._provider_factory = sources.providers
        self._tools = sources.tools
        self._routes = sources.routes  # who judges conditional routes (default: the flow's)
        self.skills = sources.skills  # the skills agents are shown (default: those found now)
        self._hooks = sources.hooks  # the hooks' decisions (default: the flow's hooks, run)
        # Where the images messages carry are kept by hash; a run without a store keeps
        # them in memory, for as long as this runner lives.
        self.images: ImageStore = sources.images if sources.images is not None else MemoryImages()
        self.clock: Clock = sources.clock or now_iso  # stamps the events this runner records
        self._legacy_digests = sources.legacy_digests  # a replay of a run recorded long ago

    def _background_of_its_own(self) -> BackgroundTasks:
        """The child runs of background tasks, kept across calls (a replay gives its own)."""
        self._own_background = BackgroundTasks(
            self._resume_child, lambda: self._state.background_started
        )
        return self._own_background

    def _build(self, flow: Flow) -> None:
        """The recorder, model caller and interpreter that run ``flow`` on this log."""
        self.flow = flow
        redact = Redactor(flow.secrets)
        self._recorder = Recorder(self._state, self.log, self._notify, redact, self.clock)
        caller = ModelCaller(
            self._recorder,
            self._provider,
            redact,
            self.on_text,
            settings=settings_of(flow),
            formats=reply_formats(flow),
            markers=flow.markers_of,
            legacy_digests=self._legacy_digests,
        )
        hooks = self._hooks or LiveHooks(flow, redact)
        self._interpreter = Interpreter(
            flow=flow,
            recorder=self._recorder,
            caller=caller,
            tools_for=self._tools_for,
            redact=redact,
            flow_record=self._flow_record,
            memory=self.memory,
            skills=self.skills,
            hooks=hooks,
            images=image_source(self.images),
            keep_images=self.keep_images,
            background=self.background,
            routes=self._routes,
        )

    def set_budget(self, cost: float, limit: str = "cost") -> None:
        """Sets (or raises) the run's cost limit (or another ``limit``) from the next step
        on (``--budget COST``), recorded as a ``budget`` event ``raised``."""
        self._budget_set = {**(self._budget_set or {}), limit: cost}

    def budget_left(self) -> dict[str, float] | None:
        """What the run's own budget has left of each limit a sub-flow spends; None: no limit."""
        keeper = self._interpreter.budget
        return keeper.left() if keeper is not None else None

    def follow(self, flow: Flow) -> None:
        """From the next step on, the run follows ``flow``, recorded as a ``flow`` event.

        Raises FlowError (nothing recorded) when ``flow`` lacks a node the history names.
        """
        check_keeps_history(flow, self.log.load())
        self._providers.clear()  # built from the old flow's provider entries
        self._takes_over = flow
        self._build(flow)

    @property
    def state(self) -> RunState:
        """The run's current state."""
        return self._state

    @property
    def run_id(self) -> str:
        return self._recorder.run_id

    async def start(
        self,
        message: str | None = None,
        *,
        from_: str | None = None,
        to: str | None = None,
        images: Sequence[LoadedImage | ImageRecord] | None = None,
    ) -> RunState:
        """Starts the run with ``message`` (default: the flow's start content) and ``images``
        (default: the flow's ``start.images``; ``roost.engine.images.load_image`` reads one).

        Raises ImageError, with nothing recorded, for an image of the flow's that is bad.
        """
        if images is None:
            start = self.flow.start
            # Read in a thread (a URL may take a while); a flow without start images never
            # yields to the loop here, so a consumer of events() made just before sees the call.
            images = await start_images_async(self.flow) if start and start.images else ()
        chosen = images
        return await self._drive(lambda: self._interpreter.start(message, from_, to, chosen))

    async def continue_(
        self, feedback: str = "", *, images: Sequence[LoadedImage | ImageRecord] = ()
    ) -> RunState:
        """Answers the pending interrupt; empty feedback lets the interrupted node answer itself.

        ``images`` go with the feedback (which must then be text answering a person's turn).
        """
        return await self._drive(lambda: self._interpreter.continue_(feedback, images))

    def keep_images(self, images: Sequence[LoadedImage | ImageRecord]) -> tuple[ImageRecord, ...]:
        """``images`` kept in the run's image store (a record names one kept already).

        The engine calls it once a message with images is sure to be recorded: an
        answer or a start that is refused keeps nothing.
        """
        loaded = [image for image in images if isinstance(image, LoadedImage)]
        kept = iter(keep(self.images, loaded))
        return tuple(next(kept) if isinstance(i, LoadedImage) else i for i in images)

    async def retry(self) -> RunState:
        """Redoes the step that failed, or the one a dead process left unfinished."""
        return await self._drive(lambda: self._interpreter.retry(self.log.load))

    def cancel(self) -> bool:
        """Stops the step in flight (a model call, a tool round) and records that it was stopped.

        The call to ``start``, ``continue_`` or ``retry`` that runs the step
        returns the state with status ``error``: tool calls left without a
        result get the result ``CANCELLED`` (an error), then an ``error`` entry
        says the step was cancelled, so ``retry`` redoes it. A model call in
        flight is dropped unrecorded, so the retry asks again. Returns False
        when no step is running.
        """
        task = self._step_task
        if task is None or task.done():
            return False
        if not self._cancelling:  # a second cancel while the first lands changes nothing
            self._cancelling = True
            task.cancel()
        return True

    @property
    def busy(self) -> bool:
        """Whether a step is running now."""
        return self._step_task is not None

    async def compact(self) -> RunState:
        """Compresses each agent's current view now (between steps of a paused run)."""
        return await self._drive(self._interpreter.compact)

    async def note(self, event: LlmCallEvent) -> RunState:
        """Appends a model call made outside the flow between steps (a flow test's
        simulated person or judge: ``purpose`` one of ``OUTSIDE_CALLS``) as the next event."""
        async with self._lock:
            if self._stale:
                self._reload()
            stamped = event.model_copy(update={"seq": self._state.next_seq, "run": self.run_id})
            self.log.append([stamped])
            self._reload()
            self._notify([stamped])  # shown and streamed like the events of a call
            return self._state

    async def events(self) -> AsyncIterator[Event]:
        """The events of the calls to start, continue_ and retry, once each, as they are appended.

        A task sees every event from the first call that began after the task
        was created, even when it first runs after that call has returned (a
        consumer made with ``create_task`` just before ``await runner.start()``
        sees the whole call); a task created during a call sees that call from
        its beginning; otherwise the iterator waits for the next call. It ends
        when the call it follows returns (the run terminated, paused or stopped
        at an error), at once for a terminated run with nothing left to show.
        Iterating again in the same task goes on after the last event it saw.
        """
        task = asyncio.current_task()
        busy = self._lock.locked()
        cursor = self._calls.cursor(task, busy)
        # The backlog is read and the queue joined with nothing awaited between:
        # no event is missed or doubled.
        backlog = [] if cursor is None else self._appended_since(cursor.seq)
        follow = busy or self._waits_for_next_call(cursor, backlog)
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        if follow:
            self._queues.append(queue)
        next_seq = cursor.seq if cursor is not None else self._state.next_seq
        try:
            for event in backlog:
                next_seq = event.seq + 1
                yield event
            while follow and (live := await queue.get()) is not None:
                next_seq = live.seq + 1
                yield live
        finally:
            if follow:
                self._queues.remove(queue)
            self._calls.seen(task, next_seq)

    # ------------------------------------------------------------------ internals

    async def _drive(self, step: Callable[[], Any]) -> RunState:
        async with self._lock:
            if self._stale:
                self._reload()
            if self._state.background:  # a run continued with background tasks open
                self.background.revive(self._state.background.values())
            if self._takes_over is not None and self._state.next_seq > 0:
                # In the step's own batch: a step that is refused writes no flow event either.
                self._recorder.add(FlowEvent, flow=self._flow_record())
            self._takes_over = None
            if self._budget_set is not None:
                self._interpreter.set_budget(self._budget_set)
                self._budget_set = None
            self._calls.begin(self._state.next_seq)
            task = self._step_task = asyncio.current_task()
            try:
                try:
                    await step()
                finally:
                    self._step_task = None
            except asyncio.CancelledError:
                if not self._cancelling or task is None:
                    self._drop_batch()
                    raise
                task.uncancel()  # the cancel was ours, asked for by cancel(): it ends here
                self._record_cancel()
            except BaseException:
                self._drop_batch()
                raise
            finally:
                self._cancelling = False
                await self._close_tools()
                await self._close_providers()
                self._calls.end()
                for queue in self._queues:
                    queue.put_nowait(None)
            return self._state

    def _drop_batch(self) -> None:
        # Events made but not appended are dropped; the next call refolds the log.
        self._recorder.batch = []
        self._stale = True

    def _record_cancel(self) -> None:
        """Records a cancelled step: open tool calls closed, then an error entry to retry."""
        self._interpreter.loop.close_open_calls(CANCELLED)
        step = self._state.step
        if step is not None:
            frm, to = step
            self._recorder.add(ErrorEvent, from_=frm, to=to, content=CANCELLED)
        self._recorder.flush()

    def _reload(self) -> None:
        fresh = fold(self.log.load())
        self._state.__dict__.update(fresh.__dict__)
        self._providers.clear()
        self._stale = False
        if fresh.flow_hash and fresh.flow_hash != text_hash(self.flow.text):
            self._takes_over = self.flow  # its flow event was lost with the failed step

    def _waits_for_next_call(self, cursor: Cursor | None, backlog: list[Event]) -> bool:
        """Whether an iterator that begins between calls waits for the next one."""
        if backlog:
            return False  # it has a call's events to show, and ends with them
        if cursor is not None and cursor.call < self._calls.ended:
            return False  # the call it follows ended having appended nothing
        return self._state.status != "terminated"  # a terminated run has no next call

    def _appended_since(self, seq: int) -> list[Event]:
        if seq >= self._state.next_seq:
            return []  # nothing recorded from seq on: the log need not be read
        return [event for event in self.log.load() if event.seq >= seq]

    def _notify(self, batch: list[Event]) -> None:
        if self.on_event is not None:
            for event in batch:
                self.on_event(event)
        for queue in self._queues:
            for event in batch:
                queue.put_nowait(event)

    def _provider(self, name: str) -> Provider:
        provider = self._providers.get(name)
        if provider is None:
            if self._provider_factory is not None:
                provider = self._provider_factory(name)
            else:
                provider = default_provider(self.flow, self._state, name)
            self._providers[name] = provider
        return provider

    def _tools_for(self, agent: str, text: str) -> Sequence[Tool]:
        if self._tools is None:
            # The toolbox's sub-flows become child runs of this run, on its child_log.
            subflows = self._child_runs()
            self._toolbox = default_toolbox(self.flow, subflows, self.memory, self.run_id)
            self._tools = self._toolbox
        tools: Sequence[Tool] = self._tools(agent, text)
        return tools

    async def _close_tools(self) -> None:
        toolbox, self._toolbox = self._toolbox, None
        if toolbox is not None:
            self._tools = None
            await toolbox.aclose()

    async def _close_providers(self) -> None:
        """Closes the providers' HTTP clients: no connection outlives the step it served.

        The providers themselves are kept (a scripted one knows its place); the
        next step's first call opens a new client.
        """
        for provider in self._providers.values():
            closer = getattr(provider, "aclose", None)
            if closer is not None:
                await closer()

    def _flow_record(self) -> FlowRecord:
        return flow_record(self.flow)

    async def _resume_child(self, task: BackgroundEvent) -> ToolOutcome:
        """The outcome of a background task this process did not start, from its child's log."""
        return await self._child_runs().resume(task)

    def _child_runs(self) -> ChildRuns:
        """This run's child runs: on its child_log, with its memory, background tasks and
        what its budget has left (which limits a new child's)."""
        return ChildRuns(
            Runner,
            parent=self.log,
            child_log=self.child_log,
            memory=self.memory,
            background=self._own_background,
            budget_left=self.budget_left,
        )
