"""``roost show``: a run's transcript, its state, how to go on, and its family."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime

from rich.console import Console
from rich.markup import escape

from roost.budget_text import budget_lines, budget_words
from roost.cli.console import compact_words, finish_note
from roost.cli.person import NOBODY, Answerer, answerers
from roost.errors import RoostError
from roost.events import (
    BackgroundEvent,
    BudgetEvent,
    CompactEvent,
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
    SkillsEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from roost.flow.routes import data_text, routes_taken
from roost.pricing import run_cost
from roost.runstate import RunState, fold
from roost.store.sql import RunInfo

_CLIP = 400


def clip(text: str, limit: int = _CLIP) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def event_line(event: Event, answerer: Answerer = NOBODY) -> str | None:
    """One event as a transcript line (rich markup), or None for events not shown.

    ``answerer`` names the person where the log records a person's answer in a channel
    as the channel's."""
    text = _exchange_text(event, answerer)
    if text is None:
        text = _step_text(event)
    return None if text is None else f"[dim]{event.seq:>4}[/] {text}"


def _exchange_text(event: Event, answerer: Answerer) -> str | None:
    """A message, a wait for an answer, an answer, an error, a retry or a channel's pick."""
    if isinstance(event, MessageEvent):
        frm, to = escape(answerer.sender(event)), escape(event.to)
        if event.data is not None:  # a structured reply: its fields, not its JSON
            return f"[bold]{frm}[/] → {to}: {escape(data_text(event.data))}"
        return f"[bold]{frm}[/] → {to}: {escape(event.content)}"
    if isinstance(event, InterruptEvent):
        why = f" ({event.reason})" if event.reason and event.reason != "human" else ""
        waits = escape(answerer.waited_for(event))
        return f"[yellow]⏸ {escape(event.to)} waits for {waits}{why}[/]"
    if isinstance(event, ErrorEvent):
        where = f"{escape(event.from_)} → {escape(event.to)}"
        return f"[bold red]✗ error[/] {where}: {escape(event.content)}"
    if isinstance(event, ResumeEvent):
        said = f": {escape(event.feedback)}" if event.feedback else " (no feedback)"
        if event.from_ in answerer.channels:
            who = f"{answerer.in_channel(event.from_)} answered {event.to}"
            return f"[yellow]↪ {escape(who)}[/]{said}"
        return f"[yellow]↪ {escape(event.from_)} answered[/]{said}"
    if isinstance(event, RetryEvent):
        return f"[yellow]↻ retry {escape(event.from_)} → {escape(event.to)}[/]"
    if isinstance(event, SelectEvent):
        chosen, by = escape(event.chosen), escape(event.by)
        taken = routes_taken(event.routes, event.chosen)
        via = f", route: {escape(taken)}" if taken else ""
        return f"[dim]{escape(event.channel)} picks {chosen} ({by}{via})[/]"
    return None


def _step_text(event: Event) -> str | None:
    """A tool call or result, a model call's failure or finish note, or a note of the run's."""
    if isinstance(event, ToolCallEvent):
        arguments = escape(clip(json.dumps(event.arguments, ensure_ascii=False), 200))
        return f"[cyan]  {escape(event.agent)} calls {escape(event.name)}({arguments})[/]"
    if isinstance(event, ToolResultEvent):
        mark = "[red]error[/] " if event.is_error else ""
        return f"[cyan]  {escape(event.name)} →[/] {mark}{escape(clip(event.content))}"
    if isinstance(event, LlmCallEvent) and event.error:
        return f"[dim]{escape(event.node)} asked {escape(event.provider)}: failed[/]"
    if isinstance(event, FlowEvent):
        record = event.flow
        named = f"{escape(record.path)} ({escape(record.name)}, {escape(record.hash[:15])}…)"
        return f"[yellow]⇄ from here the run follows {named}[/]"
    if isinstance(event, LlmCallEvent) and (note := finish_note(event.response)):
        return f"[yellow]{escape(event.node)}'s answer: {escape(note)}[/]"
    if isinstance(event, CompactEvent):
        return f"[dim]{compact_text(event)}[/]"
    if isinstance(event, SkillsEvent):
        names = ", ".join(skill.name for skill in event.skills) or "none"
        return f"[dim]skills found: {escape(names)}[/]"
    if isinstance(event, BackgroundEvent):
        what = f"task {escape(event.task)}: {escape(event.tool)} (run {escape(event.child_run)})"
        return f"[cyan]  {escape(event.agent)} started {what}[/]"
    if isinstance(event, BudgetEvent):
        return f"[yellow]{escape(budget_words(event))}[/]"
    if isinstance(event, TerminateEvent):
        why = escape(event.reason or "done")
        if event.reason == "route":
            why += escape(f": {routes_taken(event.routes, 'TERMINATE')}")
        return f"[dim]■ terminated at {escape(event.node)} ({why})[/]"
    return None


def compact_text(event: CompactEvent) -> str:
    """A compaction in words (escaped): whose view, which stage, the size before and after."""
    return escape(compact_words(event))


def next_step(state: RunState, ref: str, db: str | None, events: list[Event] | None = None) -> str:
    """The status in words and the command that continues the run."""

    def command(*parts: str, flow: str | None = None) -> str:
        from roost.store.sql import masked_db  # the store's modules load only when used

        store = ["--db", masked_db(db)] if db else []  # a password is never printed
        option = ["--flow", flow] if flow is not None else []
        return shlex.join(["roost", *parts[:1], ref, *parts[1:], *store, *option])

    if state.status == "paused" and isinstance(state.pending, InterruptEvent):
        pending = state.pending
        return (
            f"paused: {pending.to} waits for {pending.from_}\n"
            f"continue with: {command('continue', '--answer', 'TEXT')}"
        )
    if state.status == "error" and isinstance(state.pending, ErrorEvent) and events:
        from roost.cli.run_commands import retry_hint

        return f"stopped at an error\n{retry_hint(events, state.pending, state.flow_path, command)}"
    if state.status == "error":
        return f"stopped at an error\nretry with: {command('retry')}"
    if state.status == "running":
        return f"left running by a process that stopped\nresume with: {command('retry')}"
    if state.status == "terminated":
        return f"terminated\nbranch off with: {command('fork', '--at', 'SEQ')}"
    return state.status


def print_transcript(
    console: Console,
    events: list[Event],
    *,
    ref: str,
    db: str | None,
    info: RunInfo | None = None,
    family: tuple[RunInfo | None, list[RunInfo]] = (None, []),
) -> RunState:
    """Prints the whole transcript of a run; returns its state."""
    state = fold(events)
    start = events[0] if events and isinstance(events[0], RunStartEvent) else None
    title = f" — {info.title}" if info and info.title else ""
    flow = f"{start.flow.name} ({start.flow.path})" if start else "?"
    console.print(f"[bold]run {escape(ref)}[/]{escape(title)}  flow {escape(flow)}")
    if info is not None:
        shelved = f", archived {info.archived}" if info.archived else ""
        console.print(f"[dim]created {info.created}, updated {info.updated}{shelved}[/]")
    for answerer, event in answerers(events):
        line = event_line(event, answerer)
        if line is not None:
            console.print(line, soft_wrap=True)
    if state.answer is not None:
        console.print(f"[bold]answer:[/] {escape(state.answer)}", soft_wrap=True)
    usage = state.usage
    calls = sum(1 for event in events if isinstance(event, LlmCallEvent))
    console.print(
        f"usage: {calls} model calls, {usage.prompt_tokens} prompt tokens, "
        f"{usage.completion_tokens} completion tokens, cost {run_cost(events).text()}"
    )
    for line in budget_lines(state):
        console.print(escape(line))
    for line in _context_lines(events, state, ref):
        console.print(escape(line))
    print_tasks(console, events)
    console.print(escape(next_step(state, ref, db, events)))
    print_family(console, ref, *family)
    return state


def print_tasks(console: Console, events: list[Event]) -> None:
    """The run's background tasks: id, tool, agent, child run and how each stands."""
    from roost.engine.background import task_rows

    rows = task_rows(events)
    if not rows:
        return
    console.print("background tasks:")
    for row in rows:
        console.print(
            f"  {escape(row.task)}  {escape(row.status):<7}  {escape(row.tool)} "
            f"by {escape(row.agent)}  run {escape(row.child_run)}"
        )


def _context_lines(events: list[Event], state: RunState, ref: str) -> list[str]:
    """Each agent's context size against its window, under the flow the run follows now."""
    from roost.cli.console import context_lines
    from roost.engine.flows import flow_in_log

    try:
        flow = flow_in_log(events, ref, shown=True)
    except RoostError:  # no flow to read windows from: nothing to say about them
        return []
    return context_lines(flow, state)


def print_family(
    console: Console, ref: str, parent: RunInfo | None, children: list[RunInfo]
) -> None:
    """The run's parent and its forks, as a small tree."""
    if parent is None and not children:
        return
    console.print("family:")
    indent = ""
    if parent is not None:
        console.print(f"  {escape(parent.id)} [dim]({parent.status}, parent)[/]")
        indent = "  "
    console.print(f"  {indent}└─ [bold]{escape(ref)}[/] [dim](this run)[/]")
    for child in children:
        at = f"fork at {child.fork_at}" if child.fork_at is not None else "sub-flow or copy"
        console.print(f"  {indent}   └─ {escape(child.id)} [dim]({child.status}, {at})[/]")


def age(iso: str, now: datetime | None = None) -> str:
    """How long ago ``iso`` was, in the largest sensible unit."""
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    seconds = max(0, int(((now or datetime.now(UTC)) - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
