"""The Python API: ``Runner(flow, log)`` starts, continues and retries a run.

The Runner owns the run's state (folded from the log once, then kept current
by applying each event it records), the providers (built lazily, positioned
from the state) and the tools (imported only when the flow has any). It
never prompts a person: a paused run waits for ``continue_``.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from roost.engine.calls import ModelCaller, TextSink
from roost.engine.digests import settings_of
from roost.engine.flows import check_keeps_history, flow_record, text_hash
from roost.engine.interpreter import Interpreter, ToolsFor
from roost.engine.recorder import Recorder
from roost.engine.state import RunState, fold
from roost.errors import RoostError
from roost.eventlog import EventLog, MemoryLog
from roost.events import Event, FlowEvent, FlowRecord
from roost.flow.models import Flow
from roost.flow.redact import Redactor
from roost.providers.base import Provider
from roost.providers.registry import ProviderContext, build_provider

if TYPE_CHECKING:  # roost.tools is imported only by flows that have tools
    from roost.tools.base import Tool

EventSink = Callable[[Event], None]


class Runner:
    """Runs one flow against one event log."""

    def __init__(
        self,
        flow: Flow,
        log: EventLog,
        *,
        providers: Callable[[str], Provider] | None = None,
        tools: ToolsFor | None = None,
        child_log: Callable[[str], EventLog] | None = None,
        on_event: EventSink | None = None,
        on_text: TextSink | None = None,
    ) -> None:
        self.flow = flow
        self.log = log
        self.on_event = on_event
        self.on_text = on_text
        self.child_log: Callable[[str], EventLog] = child_log or (lambda run_id: MemoryLog(run_id))
        self._provider_factory = providers
        self._tools = tools
        self._toolbox: Any = None  # the default toolbox, when this runner made one
        self._providers: dict[str, Provider] = {}
        self._queues: list[asyncio.Queue[Event | None]] = []
        self._lock = asyncio.Lock()
        self._stale = False
        events = log.load()
        self._state = fold(events)
        # A flow other than the one the log says is in force takes over with a ``flow``
        # event, written before the next step, so that the log keeps telling the truth.
        self._takes_over: Flow | None = None
        if self._state.flow_hash and self._state.flow_hash != text_hash(flow.text):
            check_keeps_history(flow, events)
            self._takes_over = flow
        self._build(flow)

    def _build(self, flow: Flow) -> None:
        """The recorder, model caller and interpreter that run ``flow`` on this log."""
        self.flow = flow
        redact = Redactor(flow.secrets)
        self._recorder = Recorder(self._state, self.log, self._notify, redact)
        caller = ModelCaller(
            self._recorder, self._provider, redact, self.on_text, settings=settings_of(flow)
        )
        self._interpreter = Interpreter(
            flow, self._recorder, caller, self._tools_for, redact, self._flow_record
        )

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
        self, message: str | None = None, *, from_: str | None = None, to: str | None = None
    ) -> RunState:
        """Starts the run with ``message`` (default: the flow's start content)."""
        return await self._drive(lambda: self._interpreter.start(message, from_, to))

    async def continue_(self, feedback: str = "") -> RunState:
        """Answers the pending interrupt; empty feedback lets the interrupted node answer itself."""
        return await self._drive(lambda: self._interpreter.continue_(feedback))

    async def retry(self) -> RunState:
        """Redoes the step that failed, or the one a dead process left unfinished."""
        return await self._drive(lambda: self._interpreter.retry(self.log.load))

    async def events(self) -> AsyncIterator[Event]:
        """The events as they are appended, until the current start/continue/retry returns."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._queues.append(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            self._queues.remove(queue)

    # ------------------------------------------------------------------ internals

    async def _drive(self, step: Callable[[], Any]) -> RunState:
        async with self._lock:
            if self._stale:
                self._reload()
            if self._takes_over is not None and self._state.next_seq > 0:
                # In the step's own batch: a step that is refused writes no flow event either.
                self._recorder.add(FlowEvent, flow=self._flow_record())
            self._takes_over = None
            try:
                await step()
            except BaseException:
                # Events made but not appended are dropped; the next call refolds the log.
                self._recorder.batch = []
                self._stale = True
                raise
            finally:
                await self._close_tools()
                await self._close_providers()
                for queue in self._queues:
                    queue.put_nowait(None)
            return self._state

    def _reload(self) -> None:
        fresh = fold(self.log.load())
        self._state.__dict__.update(fresh.__dict__)
        self._providers.clear()
        self._stale = False
        if fresh.flow_hash and fresh.flow_hash != text_hash(self.flow.text):
            self._takes_over = self.flow  # its flow event was lost with the failed step

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
                if name not in self.flow.providers:
                    raise RoostError(f"no provider is called {name!r}")
                context = ProviderContext(
                    attempts_so_far=dict(self._state.provider_attempts),
                    secrets=self.flow.secrets,
                )
                provider = build_provider(name, self.flow, context)
            self._providers[name] = provider
        return provider

    def _tools_for(self, agent: str, text: str) -> Sequence[Tool]:
        if self._tools is None:
            # Imported only now: a flow without tools never pays for the tool machinery.
            module = importlib.import_module("roost.tools")
            self._toolbox = module.toolbox_for(self.flow, runner=self)
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
