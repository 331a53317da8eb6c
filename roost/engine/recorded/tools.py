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

from roost.errors import RoostError
from roost.events import (
    BackgroundEvent,
    Event,
    LlmCallEvent,
    RetryEvent,
    ToolCallEvent,
    ToolResultEvent,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.engine.recorded.stops import Stops
    from roost.engine.sources import RunPosition
    from roost.tools.base import Declared, ToolOutcome


Pair = tuple[ToolCallEvent, ToolResultEvent | None]  # None: no tool answered the call
_STOPPED_CALL = "replay: the recorded process stopped before this call finished"


class RecordedTools:
    """``tools(agent, text)`` for the Runner: the flow's declared tools, answering from the record.

    The offered names come from the flow in force in the run it is bound to, so an edited
    flow that offers other tools makes other requests. A call returns the
    recorded result of the recorded call it replays: the call the run has
    open at the same seq, or else the first unanswered recorded call of the
    same agent, tool and arguments.
    """

    def __init__(self, recorded: Sequence[Event], stops: Stops) -> None:
        self.stops = stops
        self._run: RunPosition | None = None  # the replaying run, once bound
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

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def _position(self) -> RunPosition:
        if self._run is None:
            raise RoostError("recorded tools answer a run: bind them to it first")
        return self._run

    def __call__(self, agent: str, text: str) -> Sequence[RecordedTool]:
        # roost's own modules, loaded when a replayed agent is first offered tools; no flow's.
        from roost.tools.declared import declared_skill_read, declared_tools

        flow = self._position().flow
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
        index = bisect.bisect_left(
            calls, self._position().state.next_seq, key=lambda call: call.seq
        )
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
            c.seq
            for c in self._position().state.turn.open_calls.values()
            if (c.agent, c.name, c.arguments) == key
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
        await self._source.stops.cancel_if_due()
        self._source.stops.stop_here()
        return self._source.answer(self._agent, self.spec.name, arguments)


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
