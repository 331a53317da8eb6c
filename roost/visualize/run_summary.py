"""What a run's events say about the graph: a pure summary for the drawings.

Both the static overlay (``flow_to_dot(flow, events)``) and the run page
read a run through this module, so a message is always drawn on the same
edge. Nothing here runs a flow: it only counts and classifies events.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.events import (
    ErrorEvent,
    Event,
    FlowEvent,
    InterruptEvent,
    LlmCallEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    SelectEvent,
    TerminateEvent,
    ToolCallEvent,
    nodes_named,
)
from roost.flow.routes import taken_routes
from roost.pricing import ProviderSettings, RunCost, answered_by, cost_of, provider_entries
from roost.runstate import Status, status_after
from roost.visualize import ids

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from roost.flow.models import Flow


@dataclass(frozen=True)
class FinalState:
    """Where the run stands after its last event."""

    status: Status
    node: str | None = None  # terminated at / paused waiting for / failed at
    peer: str | None = None  # the other end of a pause or an error
    detail: str = ""  # terminate reason, interrupt reason or error message


@dataclass(frozen=True)
class Tokens:
    """Tokens a node's model calls used (prompt and completion), and how many calls."""

    prompt: int = 0
    completion: int = 0
    calls: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion


@dataclass
class RunSummary:
    """Counts per edge and node, and the final state, of one run."""

    messages: Counter[tuple[str, str]] = field(default_factory=Counter)
    routes: set[tuple[str, str]] = field(default_factory=set)  # every from/to pair seen
    visited: set[str] = field(default_factory=set)
    tokens: dict[str, Tokens] = field(default_factory=dict)
    tool_calls: dict[str, Counter[str]] = field(default_factory=dict)
    picks: Counter[tuple[str, str]] = field(default_factory=Counter)  # (channel, chosen)
    # Conditional routes taken: (channel, writer, the route's place among its routes).
    taken: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    final: FinalState = field(default_factory=lambda: FinalState("new"))
    flows: list[tuple[int, str]] = field(default_factory=list)  # (seq, path) of each flow event
    costs: dict[str, RunCost] = field(default_factory=dict)  # node -> what its calls cost
    # The provider entries of the flow in force, which price the calls (run_start, flow).
    prices: Mapping[str, ProviderSettings] = field(default_factory=dict)


def is_member_route(flow: Flow, source: str, target: str) -> tuple[str, str] | None:
    """``(channel, member)`` when a route runs between a channel and one of its members."""
    for channel, member in ((target, source), (source, target)):
        spec = flow.channels.get(channel)
        if spec is not None and member in spec.members:
            return channel, member
    return None


def route_edge_id(flow: Flow, source: str, target: str) -> str:
    """The id of the edge a message from ``source`` to ``target`` is drawn on."""
    member = is_member_route(flow, source, target)
    if member is not None:
        return ids.member_edge_id(*member)
    return ids.message_edge_id(source, target)


def event_targets(flow: Flow, event: Event) -> tuple[list[str], str | None]:
    """The node ids and the edge id (if any) an event happened on."""
    nodes = [ids.node_id(name) for name in nodes_named(event)]
    match event:
        case MessageEvent() | InterruptEvent() | ErrorEvent() | ResumeEvent() | RetryEvent():
            return nodes, route_edge_id(flow, event.from_, event.to)
        case SelectEvent():
            return nodes, ids.member_edge_id(event.channel, event.chosen)
        case _:
            return nodes, None


def summarize(flow: Flow, events: Iterable[Event]) -> RunSummary:
    """Counts messages per route, visited nodes, tokens, tool calls, the conditional
    routes taken and the final state."""
    summary = RunSummary()
    seen = list(events)
    for event in seen:
        count(summary, event)
    summary.taken.update((r.channel, r.source, r.index) for r in taken_routes(seen))
    return summary


def visits(event: Event) -> tuple[str, ...]:
    """The nodes an event shows to have taken part in the run (drawn filled)."""
    match event:
        case MessageEvent():
            return (event.from_, event.to)
        case SelectEvent():
            return (event.channel, event.chosen)
        case ToolCallEvent():
            return (event.agent,)
        case LlmCallEvent():
            return (event.node,)
        case _:
            return ()


def count(summary: RunSummary, event: Event) -> None:
    """Adds one event to ``summary`` (in place): the run as it stood after that event."""
    summary.final = _next_state(summary.final, event)
    summary.visited.update(visits(event))
    match event:
        case MessageEvent():
            summary.messages[(event.from_, event.to)] += 1
            summary.routes.add((event.from_, event.to))
        case InterruptEvent() | ErrorEvent() | ResumeEvent() | RetryEvent():
            summary.routes.add((event.from_, event.to))
        case SelectEvent():
            summary.picks[(event.channel, event.chosen)] += 1
        case ToolCallEvent():
            summary.tool_calls.setdefault(event.agent, Counter())[event.name] += 1
        case FlowEvent():
            summary.flows.append((event.seq, event.flow.path))
            summary.prices = provider_entries(event.flow.text)
        case RunStartEvent():
            summary.prices = provider_entries(event.flow.text)
        case LlmCallEvent():
            if event.usage is not None:
                cost = cost_of(
                    event.usage, summary.prices.get(answered_by(event)), model=event.model
                )
                summary.costs[event.node] = summary.costs.get(event.node, RunCost()).add(cost)
            old = summary.tokens.get(event.node, Tokens())
            prompt, completion = usage_of(event)
            summary.tokens[event.node] = Tokens(
                old.prompt + prompt, old.completion + completion, old.calls + 1
            )
        case _:
            pass


def counted_node(event: Event) -> str | None:
    """The node whose counts (tokens, model calls, tool calls, choices) ``event`` changes."""
    match event:
        case LlmCallEvent():
            return event.node
        case ToolCallEvent():
            return event.agent
        case SelectEvent():
            return event.channel
        case _:
            return None


def usage_of(event: LlmCallEvent) -> tuple[int, int]:
    """Prompt and completion tokens of a model call, whichever spelling was recorded."""
    usage = event.usage
    if usage is None:
        return 0, 0
    # A log written by another program may spell them as the APIs do; they are kept
    # as extra fields of the record.
    other: dict[str, Any] = usage.model_extra or {}
    prompt = usage.prompt_tokens or int(other.get("input_tokens", 0))
    completion = usage.completion_tokens or int(other.get("output_tokens", 0))
    if not prompt and not completion and "total_tokens" in other:
        return int(other["total_tokens"]), 0
    return prompt, completion


def _next_state(state: FinalState, event: Event) -> FinalState:
    # The status is the run's fold's; the node, peer and detail say where it stands.
    status = status_after(state.status, event.type)
    match event:
        case TerminateEvent():
            return FinalState(status, event.node, None, event.reason or "")
        case InterruptEvent():
            return FinalState(status, event.from_, event.to, event.reason or "human")
        case ErrorEvent():
            return FinalState(status, event.from_, event.to, event.content)
        case _ if status == state.status:
            return state  # a model call, a tool, a change of flow: the run stands where it was
        case _:
            return FinalState(status)


def names_in(events: Sequence[Event]) -> list[str]:
    """Every node name the events mention, in order of first mention."""
    seen: dict[str, None] = {}
    for event in events:
        for name in _names(event):
            seen.setdefault(name, None)
    return list(seen)


def _names(event: Event) -> tuple[str, ...]:
    # A director's candidates are named too: the page lists every node a run mentions.
    if isinstance(event, SelectEvent):
        return (*nodes_named(event), *event.candidates)
    return nodes_named(event)
