"""The tools of a replay: what the flow declares, answered from the record, nothing run.

A run file is data. Replaying it must not start the MCP servers its flow
names, import the Python modules of its tools or open a connection, whoever
wrote the file. So the tools a replayed agent is offered are worked out from
the flow's declarations alone (its ``functions``, its ``tools`` and
``mcp_servers`` entries, and the settings written there: ``approval``,
``direct_output``, ``timeout``), with the names of an MCP server's tools, which
only the server knows, taken from the ``tools`` the recorded ``llm_call``
events list (``roost.tools.declared``: each kind of tool describes itself, and
the references resolve as the live toolbox resolves them). A call is answered
with the recorded result of the same call. Only ``roost replay --live-tools``
builds the real tools.
"""

from __future__ import annotations

import bisect
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from roost.engine.background import Finished
from roost.errors import RoostError
from roost.events import (
    BackgroundEvent,
    Event,
    LlmCallEvent,
    MemoryEntry,
    MemoryEvent,
    MessageEvent,
    RetryEvent,
    SkillInfo,
    SkillsEvent,
    TimelineEntry,
    ToolCallEvent,
    ToolResultEvent,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Sequence

    from roost.flow.models import Flow
    from roost.tools.base import Declared, ToolOutcome


Pair = tuple[ToolCallEvent, ToolResultEvent | None]  # None: no tool answered the call
_STOPPED_CALL = "replay: the recorded process stopped before this call finished"


class RecordedTools:
    """``tools(agent, text)`` for the Runner: the flow's declared tools, answering from the record.

    The offered names come from the flow in force (``flow()``), so an edited
    flow that offers other tools makes other requests. A call returns the
    recorded result of the recorded call it replays: the call the run has
    open at the same seq, or else the first unanswered recorded call of the
    same agent, tool and arguments.
    """

    def __init__(
        self,
        recorded: Sequence[Event],
        flow: Callable[[], Flow],
        next_seq: Callable[[], int],
        stop_here: Callable[[], None],
    ) -> None:
        self.flow = flow
        self.next_seq = next_seq
        self.stop_here = stop_here
        self.cancel_if_due: Callable[[], Awaitable[None]] = _never_cancelled
        self.open_calls: Callable[[], Iterable[ToolCallEvent]] = lambda: ()
        self.by_seq: dict[int, Pair] = {
            call.seq: (call, result) for call, result in _pairs(recorded)
        }
        # The background task each call started, by the call's tool_result seq.
        self.tasks = _started_tasks(recorded)
        calls = [e for e in recorded if isinstance(e, LlmCallEvent) and e.tools]
        self.names = list(dict.fromkeys(name for call in calls for name in call.tools))
        self.calls: dict[str, list[LlmCallEvent]] = defaultdict(list)  # by node, in seq order
        for call in calls:
            self.calls[call.node].append(call)
        self._declared: dict[tuple[int, str], list[Declared]] = {}

    def __call__(self, agent: str, text: str) -> Sequence[RecordedTool]:
        # roost's own modules, loaded when a replayed agent is first offered tools; no flow's.
        from roost.tools.declared import declared_skill_read, declared_tools

        flow = self.flow()
        key = (id(flow), agent)
        if key not in self._declared:
            self._declared[key] = declared_tools(flow, agent, self.names)
        tools = self._declared[key]
        config = flow.agents.get(agent)
        limit = config.tool_limit if config else None
        if limit is not None and len(tools) > limit:
            tools = self._as_offered(agent, tools, limit)
        if config is not None and config.skills:  # never ranked out, as the toolbox offers it
            tools = [*tools, declared_skill_read()]
        return [RecordedTool(tool, agent, self) for tool in tools]

    def _as_offered(self, agent: str, tools: list[Declared], limit: int) -> list[Declared]:
        """The ``limit`` tools the recorded call at this point was offered, in its order.

        Ranking needs the tools' descriptions, which only their code or server
        knows; the record says which ones won.
        """
        calls = self.calls.get(agent, [])
        index = bisect.bisect_left(calls, self.next_seq(), key=lambda call: call.seq)
        if index == len(calls):
            return tools[:limit]
        call = calls[index]
        by_name = {tool.spec.name: tool for tool in tools}
        return [by_name[name] for name in call.tools if name in by_name][:limit]

    def answer(self, agent: str, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """The recorded result of the recorded call this call replays."""
        # Loaded with the tool names already (declared_tools): roost's own module, no flow's.
        from roost.tools.base import ToolOutcome

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
        task = self.tasks.get(result.seq)
        return ToolOutcome(result.content, result.is_error, result.child_run, task, result.spent)


async def _never_cancelled() -> None:
    """No recorded cancel to replay (a RecordedTools not used by a replay)."""


class RecordedTool:
    """A declared tool whose calls are answered from the record."""

    def __init__(self, tool: Declared, agent: str, source: RecordedTools) -> None:
        self.spec = tool.spec
        self.direct_output = tool.direct_output
        self.approval = tool.approval
        self.timeout = tool.timeout
        self.background = tool.background
        self._agent = agent
        self._source = source

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        await self._source.cancel_if_due()
        self._source.stop_here()
        return self._source.answer(self._agent, self.spec.name, arguments)


class RecordedMemory:
    """The ``MemoryBank`` of a replay: recalls give what the run recorded, in order.

    Nothing is stored or forgotten: what the run's tools changed is in its record,
    and the store's memory may have moved on since.
    """

    def __init__(self, recorded: Sequence[Event]) -> None:
        self._recalls: dict[str, deque[MemoryEvent]] = defaultdict(deque)
        for event in recorded:
            if isinstance(event, MemoryEvent) and event.operation == "recall":
                self._recalls[event.scope].append(event)

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None:
        """Keeps nothing: a replay changes no memory."""

    def forget(self, scope: str, key: str, run: str) -> bool:
        """Forgets nothing: a replay changes no memory."""
        return True

    def entries(self, scope: str, as_of: str | None = None) -> list[MemoryEntry]:
        """None: a replay reads memory only through the recalls it recorded."""
        return []

    def keep_timeline(self, scope: str, entry: TimelineEntry) -> None:
        """Keeps nothing: a replay changes no memory."""

    def timeline(
        self,
        scope: str,
        query: str,
        limit: int,
        *,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> list[TimelineEntry]:
        """None: a replay's tools answer from the record, never from here."""
        return []

    def recall(
        self, scope: str, query: str, limit: int, as_of: str | None = None
    ) -> list[MemoryEntry]:
        """The entries the run recalled next in ``scope`` for this query; none if it did not."""
        waiting = self._recalls[scope]
        if waiting and waiting[0].query == query:
            return list(waiting.popleft().entries or ())[:limit]
        return []


class RecordedSkills:
    """The skills of a replay: those the run's ``skills`` events recorded, never the folders'.

    At each point the replay asks, the answer is the latest recorded list at or before
    the event it writes next; so a list the run recorded at a seq is recorded there again.
    """

    def __init__(self, recorded: Sequence[Event], next_seq: Callable[[], int]) -> None:
        found = [event for event in recorded if isinstance(event, SkillsEvent)]
        self._seqs = [event.seq for event in found]
        self._skills = [event.skills for event in found]
        self._next_seq = next_seq

    def __call__(self, flow: Flow) -> tuple[SkillInfo, ...]:
        """The list recorded last by now; none when the run had recorded none."""
        index = bisect.bisect_right(self._seqs, self._next_seq()) - 1
        return self._skills[index] if index >= 0 else ()


def _started_tasks(recorded: Sequence[Event]) -> dict[int, str]:
    """The task id each background event names, by the seq of the tool result it follows."""
    results: dict[tuple[str, str], int] = {}
    found: dict[int, str] = {}
    for event in recorded:
        if isinstance(event, ToolResultEvent):
            results[(event.agent, event.id)] = event.seq
        elif isinstance(event, BackgroundEvent):
            seq = results.get((event.agent, event.call))
            if seq is not None:
                found[seq] = event.task
    return found


class RecordedBackground:
    """The results of background tasks, delivered in the order the record delivered them.

    Nothing runs: each wait gives the next recorded delivery (its text as it was),
    or stops the replay where the recorded process stopped before one came.
    """

    def __init__(self, recorded: Sequence[Event], stop_here: Callable[[], None]) -> None:
        self._stop_here = stop_here
        self._deliveries = [
            e for e in recorded if isinstance(e, MessageEvent) and e.background is not None
        ]
        self._next = 0

    def revive(self, open_tasks: Iterable[BackgroundEvent]) -> None:
        """Nothing to revive: no child runs in a replay."""

    async def next_finished(self, open_tasks: Sequence[BackgroundEvent]) -> Finished:
        self._stop_here()
        if self._next >= len(self._deliveries):
            raise RoostError("replay: the record delivers no more background results")
        delivery = self._deliveries[self._next]
        self._next += 1
        note = delivery.background
        assert note is not None
        task = next((t for t in open_tasks if t.task == note.task), None)
        if task is None:
            raise RoostError(f"replay: background task {note.task} is not open here")
        content = delivery.content.split("\n\n", 1)[-1]
        return Finished(task, content, note.status == "failed")


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
