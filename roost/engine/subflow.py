"""Running a ``flow:`` tool: another flow as a child run of the calling run.

``ChildRuns`` implements ``roost.tools.subflow.SubflowRunner``. It starts the
sub-flow with its own ``Runner`` on a log from ``child_log`` (memory by
default), runs it to completion or to its first interrupt, and answers with
its last message. The child's ``run_start`` event names the parent run and
the tool call that started it, so a person can open the child from the
parent's ``tool_result`` (its ``child_run`` field).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from roost.errors import RoostError
from roost.eventlog import EventLog, MemoryLog
from roost.events import Event, InterruptEvent, RunStartEvent, ToolCallEvent, ToolResultEvent
from roost.flow.models import Flow
from roost.runstate import fold
from roost.tools.base import ToolOutcome
from roost.tools.subflow import current_tool_call

ChildLogs = Callable[[str], EventLog]


def new_child_id() -> str:
    """A run id in the store's style: ``20261130-144110-3f9a2c``."""
    return f"{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


class ChildRuns:
    """Runs sub-flows for one parent run (or for none, when used on its own)."""

    def __init__(
        self,
        *,
        parent: EventLog | None = None,
        child_log: ChildLogs | None = None,
        providers: Any = None,
    ) -> None:
        self._parent = parent
        self._child_log: ChildLogs = child_log or MemoryLog
        self._providers = providers
        self._claimed: set[str] = set()
        self.logs: dict[str, EventLog] = {}  # child run id -> its log, for callers and tests

    async def run_subflow(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Runs ``flow`` as a child run and returns its last message (an error as an error)."""
        from roost.engine.runner import Runner
        from roost.tools import toolbox_for

        run_id = new_child_id()
        call_id = current_tool_call.get() or self._find_call(tool, arguments)
        log = LinkedLog(self._child_log(run_id), self._parent_id(), call_id)
        self.logs[log.run_id] = log
        toolbox = toolbox_for(flow, runner=ChildRuns(parent=log, child_log=self._child_log))
        kwargs: dict[str, Any] = {"tools": toolbox, "child_log": self._child_log}
        if self._providers is not None:
            kwargs["providers"] = self._providers
        try:
            runner = Runner(flow, log, **kwargs)
            await runner.start(message)
        except RoostError as exc:
            text = f"sub-flow {flow.name!r} failed: {exc}"
            return ToolOutcome(text, is_error=True, child_run=log.run_id)
        finally:
            await toolbox.aclose()
        return outcome_of(log.load(), flow.name, log.run_id)

    def _parent_id(self) -> str | None:
        return self._parent.run_id if self._parent is not None else None

    def _find_call(self, tool: str, arguments: dict[str, Any]) -> str | None:
        """The parent's open tool call this run answers (when the engine did not say)."""
        if self._parent is None:
            return None
        events = self._parent.load()
        answered = {e.id for e in events if isinstance(e, ToolResultEvent)}
        for event in reversed(events):
            if (
                isinstance(event, ToolCallEvent)
                and event.name == tool
                and event.arguments == arguments
                and event.id not in answered
                and event.id not in self._claimed
            ):
                self._claimed.add(event.id)
                return event.id
        return None


def outcome_of(events: Sequence[Event], name: str, run_id: str) -> ToolOutcome:
    """The child's last message as the tool's result; a child stopped at an error is an error.

    A child paused because one of its own tools waits for approval has no answer
    yet: that is an error result too, naming the tool and the run to continue.
    """
    state = fold(events)
    pending = state.pending
    if state.status == "error":
        why = getattr(pending, "content", "") or "it stopped at an error"
        return ToolOutcome(f"sub-flow {name!r} failed: {why}", is_error=True, child_run=run_id)
    if isinstance(pending, InterruptEvent) and pending.reason == "tool_approval":
        tool = (pending.tool_call or {}).get("name", "?")
        text = f"sub-flow {name!r} is waiting for approval of its tool {tool!r} (run {run_id})"
        return ToolOutcome(text, is_error=True, child_run=run_id)
    for entry in reversed(state.history):
        if entry.state == "success":
            return ToolOutcome(entry.content, child_run=run_id)
    return ToolOutcome("", child_run=run_id)


class LinkedLog:
    """A child run's log: its ``run_start`` names the parent run and tool call."""

    def __init__(self, inner: EventLog, parent: str | None, tool_call: str | None) -> None:
        self._inner = inner
        self._parent = parent
        self._tool_call = tool_call

    @property
    def run_id(self) -> str:
        return self._inner.run_id

    def load(self) -> list[Event]:
        return self._inner.load()

    def append(self, events: Sequence[Event]) -> None:
        self._inner.append([self._link(event) for event in events])

    def _link(self, event: Event) -> Event:
        if isinstance(event, RunStartEvent) and event.parent is None:
            update = {"parent": self._parent, "parent_tool_call": self._tool_call}
            return event.model_copy(update=update)
        return event
