"""A run's events as spans: a pure function, and the fold it is made of.

Each run is one trace. Its spans:

- the run (``invoke_workflow FLOW``), from ``run_start`` to where the run
  ended, the parent of all the others; the person's answers, pauses, errors,
  retries and flow changes are notes on it;
- each reply of an agent (``invoke_agent NODE``), from its first model call
  to its message, or to the error that stopped it;
- each director's choice of a channel's next speaker (``select CHANNEL``),
  holding the model call that chose when a model chose;
- each model call (``chat MODEL``), from the event before it to its
  ``llm_call``: the engine records every event before it calls a model, so
  the previous event's time is when the call was made;
- each tool call (``execute_tool TOOL``), from ``tool_call`` to ``tool_result``.

Events of one step share one time, so a span that begins and ends in one step
lasts no time. ``SpanFold.add`` gives the spans an event completes, which is
how a run is traced while it goes; ``spans_of`` folds a whole run and closes
what is still open at its last event, which is how a stored run is sent later.
Both give the same spans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.events import (
    BudgetEvent,
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
    ToolResultEvent,
)
from roost.runstate import STATUS_AFTER, Status
from roost.telemetry import genai
from roost.telemetry.genai import CONVERSATION, OPERATION, RUN, SEQ, FlowFacts
from roost.telemetry.records import (
    Attributes,
    Link,
    Note,
    SpanKind,
    SpanRecord,
    run_span_id,
    span_id_of,
    time_ns,
    trace_id_of,
)

if TYPE_CHECKING:
    from collections.abc import Iterable


@dataclass(slots=True)
class _Open:
    """A span begun and not yet ended."""

    span_id: int
    parent_id: int | None
    start_ns: int
    attributes: Attributes = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    error: str | None = None


def spans_of(events: Iterable[Event], *, content: bool = False) -> list[SpanRecord]:
    """Every span of a run's events; what is still open ends at the last event.

    ``content`` adds the texts of messages, model answers and tool calls.
    """
    fold = SpanFold(content=content)
    spans = [span for event in events for span in fold.add(event)]
    return spans + fold.finish()


class SpanFold:
    """Turns one run's events, in order, into spans as each span completes."""

    def __init__(self, *, content: bool = False) -> None:
        self.content = content
        self.run_id = ""
        self._trace = 0
        self._facts = FlowFacts("", {}, {}, frozenset())
        self._run: _Open | None = None
        self._status: Status = "new"
        self._last_ns = 0
        self._last_seq = -1
        self._turns: dict[str, _Open] = {}  # node -> its reply or director's choice
        self._tools: dict[str, _Open] = {}  # tool call id -> its span

    def add(self, event: Event) -> list[SpanRecord]:
        """Takes the run's next event; returns the spans it completes."""
        at = time_ns(event.ts)
        at = self._last_ns if at is None else at
        if self._run is None:
            self._begin_run(event, at)
        self._status = STATUS_AFTER.get(event.type, self._status)
        done = self._apply(event, at)
        self._last_ns = at
        self._last_seq = event.seq
        return done

    def finish(self) -> list[SpanRecord]:
        """Ends what is still open at the last event seen: tools, replies, then the run."""
        at = self._last_ns
        done = self._close_all(at, error=None)
        if self._run is not None:
            done.append(self._end_run(at))
        return done

    # ------------------------------------------------------------------ per event

    def _apply(self, event: Event, at: int) -> list[SpanRecord]:
        match event:
            case LlmCallEvent():
                return [self._chat(event, at)]
            case MessageEvent():
                self._note("roost.message", at, event, **self._message_facts(event))
                return self._close_turn(event.from_, at, event.seq, text=event.content)
            case SelectEvent():
                return [self._select(event, at)]
            case ToolCallEvent():
                turn = self._turn(event.agent, event.seq)
                attributes = genai.tool_attributes(event, self.content)
                self._tools[event.id] = _Open(
                    span_id_of(self.run_id, "tool", event.seq), turn.span_id, at, attributes
                )
                return []
            case ToolResultEvent():
                return [self._tool_result(event, at)]
            case ErrorEvent():
                self._note("roost.error", at, event, message=event.content, node=event.from_)
                return self._close_turn(event.from_, at, event.seq, error=event.content)
            case InterruptEvent():
                self._note("roost.interrupt", at, event, **self._interrupt_facts(event))
                return []
            case ResumeEvent():
                facts: Attributes = {"roost.node": event.from_}
                if self.content:
                    facts["roost.feedback"] = event.feedback
                self._note("roost.resume", at, event, **facts)
                return []
            case RetryEvent():
                self._note("roost.retry", at, event, node=event.from_)
                # What a stopped process left open never ended: it ends where it stopped.
                return self._close_all(self._last_ns, error="left unfinished by a stopped process")
            case FlowEvent():
                self._facts = genai.flow_facts(event.flow.name, event.flow.text, event.flow.path)
                self._note("roost.flow", at, event, path=event.flow.path, hash=event.flow.hash)
                return []
            case TerminateEvent():
                self._note("roost.terminate", at, event, node=event.node, reason=event.reason or "")
                done = self._close_all(at, error=None)
                done.append(self._end_run(at))
                return done
            case BudgetEvent():
                self._budget(event, at)
                return []
            case RunStartEvent():
                return []  # begun by _begin_run
        return []  # a type a newer roost wrote: it has no span here

    def _chat(self, event: LlmCallEvent, at: int) -> SpanRecord:
        turn = self._turn(event.node, event.seq)
        attributes = genai.chat_attributes(event, self._facts, self.content)
        if event.usage is not None:
            genai.add_usage(turn.attributes, event.usage)
        for key in (genai.PROVIDER, genai.SYSTEM, "gen_ai.request.model"):
            turn.attributes[key] = attributes[key]
        if event.error is not None:
            attributes["error.type"] = genai.failure_type(event)
        model = str(attributes["gen_ai.request.model"])
        started = _Open(span_id_of(self.run_id, "chat", event.seq), turn.span_id, self._last_ns)
        started.attributes = attributes
        started.error = event.error
        return self._record(f"chat {model}".strip(), "client", started, at)

    def _select(self, event: SelectEvent, at: int) -> SpanRecord:
        chosen = self._turns.pop(event.channel, None)
        if chosen is None:  # chosen without a model: the choice takes no time
            chosen = _Open(span_id_of(self.run_id, "select", event.seq), self._run_id(), at)
        chosen.attributes.update(
            {
                "roost.operation": "select",
                RUN: self.run_id,
                SEQ: event.seq,
                "roost.channel": event.channel,
                "roost.select.candidates": tuple(event.candidates),
                "roost.select.chosen": event.chosen,
                "roost.select.by": event.by,
            }
        )
        return self._record(f"select {event.channel}", "internal", chosen, at)

    def _tool_result(self, event: ToolResultEvent, at: int) -> SpanRecord:
        started = self._tools.pop(event.id, None)
        if started is None:  # its call was not seen (a log that begins later)
            turn = self._turn(event.agent, event.seq)
            span_id = span_id_of(self.run_id, "tool", event.seq)
            started = _Open(span_id, turn.span_id, self._last_ns, {})
        started.attributes.update(genai.result_attributes(event, self.content))
        if event.is_error:
            started.error = "the tool answered with an error"
        return self._record(f"execute_tool {event.name}", "internal", started, at)

    # ------------------------------------------------------------------ turns

    def _turn(self, node: str, seq: int) -> _Open:
        """The open reply (or director's choice) of ``node``, begun now when there is none."""
        turn = self._turns.get(node)
        if turn is None:
            span_id = span_id_of(self.run_id, "turn", seq)
            turn = _Open(span_id, self._run_id(), self._last_ns, {"roost.node": node})
            self._turns[node] = turn
        return turn

    def _close_turn(
        self, node: str, at: int, seq: int, *, text: str | None = None, error: str | None = None
    ) -> list[SpanRecord]:
        turn = self._turns.pop(node, None)
        if turn is None:
            return []  # a message nobody's model made: the start, or a person's answer
        if error is not None:
            turn.error = error
        if text is not None and self.content:
            turn.attributes["gen_ai.output.messages"] = genai.text_message(text)
        return [self._end_turn(node, turn, at, seq)]

    def _end_turn(self, node: str, turn: _Open, at: int, seq: int) -> SpanRecord:
        turn.attributes.update({RUN: self.run_id, SEQ: seq, CONVERSATION: self.run_id})
        if node in self._facts.channels:
            turn.attributes.update({"roost.operation": "select", "roost.channel": node})
            return self._record(f"select {node}", "internal", turn, at)
        turn.attributes.update({OPERATION: "invoke_agent", "gen_ai.agent.name": node})
        return self._record(f"invoke_agent {node}", "internal", turn, at)

    def _close_all(self, at: int, *, error: str | None) -> list[SpanRecord]:
        done: list[SpanRecord] = []
        for tool_id in list(self._tools):
            started = self._tools.pop(tool_id)
            started.error = started.error or error
            name = started.attributes.get("gen_ai.tool.name", "tool")
            done.append(self._record(f"execute_tool {name}", "internal", started, at))
        for node in list(self._turns):
            turn = self._turns.pop(node)
            turn.error = turn.error or error
            done.append(self._end_turn(node, turn, at, self._last_seq))
        return done

    # ------------------------------------------------------------------ the run

    def _run_id(self) -> int:
        return run_span_id(self.run_id)

    def _begin_run(self, event: Event, at: int) -> None:
        self.run_id = event.run
        self._trace = trace_id_of(event.run)
        self._last_ns = at
        attributes: Attributes = {
            OPERATION: "invoke_workflow",
            CONVERSATION: event.run,
            RUN: event.run,
            SEQ: event.seq,
        }
        self._run = _Open(run_span_id(event.run), None, at, attributes)
        if isinstance(event, RunStartEvent):
            flow = event.flow
            self._facts = genai.flow_facts(flow.name, flow.text, flow.path)
            attributes.update(
                {
                    "gen_ai.workflow.name": flow.name,
                    "roost.flow.path": flow.path,
                    "roost.flow.hash": flow.hash,
                }
            )
            for key in ("parent", "fork_at", "parent_tool_call"):
                value = getattr(event, key)
                if value is not None:
                    attributes[f"roost.run.{key}"] = value

    def _end_run(self, at: int) -> SpanRecord:
        run = self._run
        assert run is not None
        self._run = None
        run.attributes["roost.run.status"] = self._status
        if self._status == "error":
            run.error = "the run stopped at an error"
        links: tuple[Link, ...] = ()
        parent = run.attributes.get("roost.run.parent")
        if isinstance(parent, str):
            links = (Link(trace_id_of(parent), run_span_id(parent), {"roost.run.id": parent}),)
        name = f"invoke_workflow {self._facts.name}".strip()
        return self._record(name, "internal", run, at, links)

    def _note(self, name: str, at: int, event: Event, **facts: object) -> None:
        if self._run is not None:
            attributes: Attributes = {SEQ: event.seq}
            for key, value in facts.items():
                if isinstance(value, str | int | float | bool):
                    attributes[key if "." in key else f"roost.{key}"] = value
            self._run.notes.append(Note(name, at, attributes))

    def _budget(self, event: BudgetEvent, at: int) -> None:
        """A budget's decision: an event of the run's span, and the run's latest decision
        as the span's own attributes (``roost.budget.*``)."""
        facts: dict[str, object] = {
            "roost.budget.limit": event.limit,
            "roost.budget.spent": event.spent,
            "roost.budget.allowed": event.allowed,
            "roost.budget.action": event.action,
        }
        for key in ("agent", "node", "estimate", "provider"):
            value = getattr(event, key)
            if value is not None:
                facts[f"roost.budget.{key}"] = value
        self._note("roost.budget", at, event, **facts)
        if self._run is not None:
            for key, value in facts.items():
                if isinstance(value, str | int | float):
                    self._run.attributes[key] = value

    def _message_facts(self, event: MessageEvent) -> dict[str, object]:
        facts: dict[str, object] = {"roost.from": event.from_, "roost.to": event.to}
        if self.content:
            facts["roost.content"] = event.content
        return facts

    def _interrupt_facts(self, event: InterruptEvent) -> dict[str, object]:
        facts: dict[str, object] = {"roost.node": event.from_, "roost.to": event.to}
        if event.reason is not None:
            facts["roost.reason"] = event.reason
        if event.tool_call is not None:
            facts["gen_ai.tool.name"] = str(event.tool_call.get("name", ""))
        return facts

    def _record(
        self,
        name: str,
        kind: SpanKind,
        started: _Open,
        at: int,
        links: tuple[Link, ...] = (),
    ) -> SpanRecord:
        return SpanRecord(
            name=name,
            trace_id=self._trace,
            span_id=started.span_id,
            parent_id=started.parent_id,
            kind=kind,
            start_ns=started.start_ns,
            end_ns=max(at, started.start_ns),
            attributes=started.attributes,
            error=started.error,
            notes=tuple(started.notes),
            links=links,
        )
