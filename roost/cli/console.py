"""The terminal side of a run: messages as they happen, and the prompt at each interrupt.

Each speaker gets a colour of its own; streamed text is shown as it arrives
and the finished message is not printed again. A channel's choice of the next
speaker is shown as one line, never as streamed text. The engine never
prompts: the run commands ask here and pass the answer to ``Runner.continue_``.
"""

from __future__ import annotations

import json
import select
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from roost.budget_text import budget_words
from roost.cli.lines import Piece, lines_for
from roost.cli.person import Answerer
from roost.context_window import limit_in
from roost.errors import CONTEXT_TOO_LONG
from roost.events import (
    BudgetEvent,
    CompactEvent,
    ErrorEvent,
    Event,
    HookEvent,
    InterruptEvent,
    LlmCallEvent,
    LlmResponse,
    MessageEvent,
    SelectEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
    valid_text,
)
from roost.flow.models import Flow
from roost.flow.routes import data_text, routes_taken
from roost.runstate import RunState

PALETTE = [
    "cyan",
    "magenta",
    "green",
    "yellow",
    "blue",
    "bright_red",
    "bright_cyan",
    "bright_magenta",
]


# Why a channel chose its speaker, when the choice is not simply the director's answer.
PICKED_BY = {
    "llm_retry": "on the director's second answer",
    "fallback": "fallback: the director named no candidate, so one was drawn at random",
    "only_candidate": "the only candidate",
    "round_robin": "round robin",
    "random": "at random",
    "manual": "named by a person",
}

# Typed at a person's prompt, it lets the node answer by itself (the empty feedback).
LET = "/let"

# Shown after text a model wrote in the same answer as its tool calls.
BEFORE_TOOLS = "(written before its tool calls: not a reply)"

# Unstyled pieces of the lines printed for every message.
_TO: Piece = (" → ", "")
_SAYS: Piece = (": ", "")
_SPACE: Piece = (" ", "")


class RunConsole:
    """Prints a run's events and asks a person for answers."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        channels: Iterable[str] = (),
        tool_users: Iterable[str] = (),
        step: Callable[[], tuple[str, str] | None] | None = None,
    ) -> None:
        self.out = console or Console(highlight=False, soft_wrap=True)
        # The run's own lines: plain and buffered to a pipe, rich to a terminal. Other
        # lines (prompts, notes of the commands) go through ``out``, which flushes.
        self.lines = lines_for(self.out)
        # A director's answer is a name, shown through the select event, never streamed.
        self.channels = frozenset(channels)
        # Who answers in a channel, named on the line of their answer (the log says the channel).
        self.answerer = Answerer(self.channels)
        # Text from an agent with tools may be a note before its tool calls rather than its
        # reply, so its streamed lines name no addressee.
        self.tool_users = frozenset(tool_users)
        self.step = step
        self._colours: dict[str, str] = {}
        self._styles: dict[str, str] = {}  # each node's style, made once
        self._streaming: str | None = None
        self._high = ""  # the first half of a surrogate pair still waiting for its second
        self._notes: list[str] = []  # how model answers ended, shown after their message
        # The command says the error the run stopped at when it ends (on standard error,
        # with how to retry): the transcript does not say it a first time.
        self.error_told_at_end = False
        self.typed: str | None = None  # the line the person just typed: not printed again
        self._said_last: str | None = None  # who wrote the latest message

    @classmethod
    def for_flow(
        cls, flow: Flow, *, step: Callable[[], tuple[str, str] | None] | None = None
    ) -> RunConsole:
        """A console that knows ``flow``'s channels and which of its agents have tools."""
        console = cls(step=step)
        console.use_flow(flow)
        return console

    def use_flow(self, flow: Flow) -> None:
        """Takes the channels and tool users of ``flow`` (a chat may switch to another flow)."""
        self.channels = frozenset(flow.channels)
        self.answerer = Answerer.of_flow(flow)
        self.tool_users = frozenset(name for name, agent in flow.agents.items() if agent.functions)

    def colour(self, node: str) -> str:
        """The colour of ``node``, the same for the whole run."""
        colour = self._colours.get(node)
        if colour is None:
            colour = self._colours[node] = PALETTE[len(self._colours) % len(PALETTE)]
        return colour

    def name(self, node: str) -> str:
        """``node`` in its colour, as rich markup."""
        return f"[bold {self.colour(node)}]{escape(node)}[/]"

    def named(self, node: str) -> Piece:
        """``node`` in its colour, as a piece of a line."""
        return node, self._styles.get(node) or self._style(node)

    def _style(self, node: str) -> str:
        style = self._styles[node] = f"bold {self.colour(node)}"
        return style

    def flush(self) -> None:
        """Sends what the run printed on to the output (before a prompt or an error line)."""
        self.lines.flush()

    def on_text(self, node: str, chunk: str) -> None:
        """Shows streamed text as it arrives."""
        if node in self.channels:
            return
        if self._streaming != node:
            self.end_line()
            step = self.step() if self.step is not None else None
            addressed = step is not None and step[0] == node and node not in self.tool_users
            if step is not None and addressed:
                self.lines.write((self.named(node), _TO, self.named(step[1]), _SAYS), end="")
            else:
                self.lines.write((self.named(node), _SAYS), end="")
            self._streaming = node
        # An emoji may arrive split into its two UTF-16 halves: keep a first half back.
        chunk, self._high = self._high + chunk, ""
        if chunk and "\ud800" <= chunk[-1] <= "\udbff":
            chunk, self._high = chunk[:-1], chunk[-1]
        self.lines.write(((valid_text(chunk), ""),), end="")

    def on_limit_wait(self, provider: str) -> None:
        """A model call waits for its turn at its provider's limits: said as it begins."""
        self.end_line()
        self.lines.write(((f"(a call waits for its turn at {provider}'s limits)", "dim"),))

    def end_line(self) -> None:
        """Ends a line of streamed text, so that what comes next starts a line of its own."""
        self._high = ""
        if self._streaming is not None:
            self.lines.write(())
            self._streaming = None

    def on_event(self, event: Event) -> None:
        """Shows one recorded event."""
        if isinstance(event, MessageEvent):
            self._message(event)
        elif isinstance(event, SelectEvent):
            self._pick(event)
        elif isinstance(event, CompactEvent):
            self.end_line()
            self.lines.write(((compact_words(event), "dim"),))
        elif isinstance(event, LlmCallEvent):
            refused = refused_words(event)
            if refused is not None:
                self.end_line()
                self.lines.write(((refused, "dim"),))
            note = finish_note(event.response)
            if note is not None:
                self._notes.append(f"({event.node}: {note})")
        elif isinstance(event, ToolCallEvent):
            if self._streaming == event.agent:
                self.lines.write(((f" {BEFORE_TOOLS}", "dim italic"),), end="")
            self.end_line()
            self._print_notes()
            arguments = json.dumps(event.arguments, ensure_ascii=False)
            self.lines.write(((f"  {event.agent} calls {event.name}({arguments})", "dim"),))
        elif isinstance(event, ToolResultEvent):
            where = (f"  {event.name} → ", "dim")
            text = (_short(event.content), "dim")
            if event.is_error:
                self.lines.write((where, ("error", "dim red"), (" ", "dim"), text))
            else:
                self.lines.write((where, text))
        elif isinstance(event, HookEvent):
            said = hook_note(event)
            if said is not None:
                self.end_line()
                self.lines.write(((said, "dim"),))
        elif isinstance(event, ErrorEvent):
            self.end_line()
            if self.error_told_at_end:
                return
            at = (self.named(event.from_), (f": {event.content}", ""))
            self.lines.write((("error", "bold red"), (" at ", ""), *at))
        elif isinstance(event, TerminateEvent):
            self.end_line()
            self.lines.write(((f"— {ending(event, self._said_last)} —", "dim"),))
        elif isinstance(event, BudgetEvent):
            self.end_line()
            self.lines.write(((budget_words(event), "yellow"),))

    def _pick(self, event: SelectEvent) -> None:
        self.end_line()
        why = PICKED_BY.get(event.by)
        picks = (f"{event.channel} picks", "dim")
        taken = routes_taken(event.routes, event.chosen)
        if taken:  # the route that led there
            why = f"{why}, route: {taken}" if why else f"route: {taken}"
        if why:
            self.lines.write((picks, _SPACE, self.named(event.chosen), (f" ({why})", "dim")))
        else:
            self.lines.write((picks, _SPACE, self.named(event.chosen)))

    def _message(self, event: MessageEvent) -> None:
        self._said_last = event.from_
        typed, self.typed = self.typed, None
        if self._streaming == event.from_ or event.content == typed:
            self.end_line()  # streamed, or typed by the person: already on the screen
        else:
            self.end_line()
            shown = data_text(event.data) if event.data is not None else event.content
            said = (f": {shown}", "")
            frm = self.answerer.sender(event)
            self.lines.write((self.named(frm), _TO, self.named(event.to), said))
        self._print_notes()

    def _print_notes(self) -> None:
        notes, self._notes = self._notes, []
        for note in notes:
            self.lines.write(((note, "yellow"),))

    def ask(self, interrupt: InterruptEvent, state: RunState, choices: Sequence[str]) -> str:
        """Asks the person at an interrupt until they give an answer (Ctrl-C: KeyboardInterrupt).

        An empty line is no answer: it asks again, with a hint. ``/let`` at a person's
        prompt is the empty feedback that lets the node answer by itself.
        """
        self.end_line()
        self.flush()
        self.out.print(f"[bold]{escape(describe_wait(interrupt, choices, self.channels))}[/]")
        hint = f"[dim]{escape(_hint(interrupt))}[/] "
        while True:
            self.out.print(f"{self.prompt(interrupt)}{hint}", end="")
            _wait_for_a_line(sys.stdin)
            line = input()
            said = line.strip()
            if said == LET and interrupt.reason == "human":
                return ""
            if said and said != LET:
                if interrupt.reason == "human":
                    self.typed = line  # on the screen as typed: its message is not printed again
                return line
            self.out.print(f"[dim]{escape(empty_line_hint(interrupt))}[/]")
            hint = ""

    def prompt(self, interrupt: InterruptEvent | None, route: tuple[str, str] | None = None) -> str:
        """The input prompt (rich markup): it names who the person answers as, and to whom."""
        if interrupt is not None:
            if interrupt.reason == "manual_select":
                return f"{self.name(interrupt.from_)} [bold]next speaker> [/]"
            if interrupt.reason == "tool_approval":
                return "[bold]run it? > [/]"
            if interrupt.reason == "budget":
                return "[bold]new limit> [/]"
            if interrupt.reason == "tool_plan":
                return "[bold]run them? > [/]"
            if interrupt.from_ in self.channels:  # a member said INTERRUPT in a channel
                room, to = self.name(interrupt.from_), self.name(interrupt.to)
                return f"[bold]you[/] in {room} → {to}[bold]> [/]"
            route = (interrupt.from_, interrupt.to)
        if route is None:
            return "[bold]> [/]"
        return f"{self.name(route[0])} → {self.name(route[1])}[bold]> [/]"

    def usage(self, state: RunState, flow: Flow, events: Callable[[], Sequence[Event]]) -> None:
        """Prints the run's token usage and cost, if any was reported, and each agent's
        context size against its window. ``events`` reads the run's log, which only the
        cost needs: a run without reported usage is not read back."""
        usage = state.usage
        self.flush()
        if usage.prompt_tokens or usage.completion_tokens:
            self.out.print(escape(usage_line(usage, events())), style="dim")
        for size in context_lines(flow, state):
            self.out.print(escape(size), style="dim")


def usage_line(usage: Any, events: Sequence[Event]) -> str:
    """``usage: 3 calls, 120 prompt tokens, 40 completion tokens, cost $0.0004 (estimated)``,
    and ``, 2 calls waited 1.5 s for provider limits`` when some waited for their turn."""
    from roost.pricing import run_cost

    return (
        f"usage: {usage.calls} calls, {usage.prompt_tokens} prompt tokens, "
        f"{usage.completion_tokens} completion tokens"
        + (f", {usage.cached_tokens} cached" if usage.cached_tokens else "")
        + f", cost {run_cost(events).text()}"
        + limit_waits(events)
    )


def limit_waits(events: Sequence[Event]) -> str:
    """``, 2 calls waited 1.5 s for provider limits``: the waits recorded on the llm_calls."""
    waits = [e.waited for e in events if isinstance(e, LlmCallEvent) and e.waited]
    if not waits:
        return ""
    calls = "1 call" if len(waits) == 1 else f"{len(waits)} calls"
    return f", {calls} waited {sum(waits):.1f} s for provider limits"


def context_lines(flow: Flow, state: RunState) -> list[str]:
    """``context: a → b: ~1,234 of 128,000 tokens (1%)``, one line per agent that spoke."""
    from roost.engine.compaction import context_sizes

    return [f"context: {size.text()}" for size in context_sizes(flow, state)]


def finish_note(response: LlmResponse | None) -> str | None:
    """How a recorded model answer ended, in words, when that is worth a line."""
    if response is None:
        return None
    reason = response.finish_reason
    said: list[str] = []
    if response.cut:
        said.append(_CUT.get(str(reason), "cut at max_tokens"))
    if response.refused:
        said.append("stopped by a content filter" if reason == "content_filter" else "refused")
    said += [str(note) for note in response.notes]
    return "; ".join(said) or None


_CUT = {
    "model_context_window_exceeded": "cut: the context window is full",
    "pause_turn": "cut: the turn was still paused",
}


def compact_words(event: CompactEvent) -> str:
    """A compaction in words: whose view, which stage, the size before and after."""
    covered = {"trim": "tool results trimmed", "summary": "older turns summarised"}
    what = covered.get(event.stage, "older turns left out")
    return (
        f"⇲ {event.node}'s view of its talk with {event.to} compressed "
        f"({event.stage}: {what} through {event.through}): "
        f"~{event.tokens_before:,} → ~{event.tokens_after:,} tokens"
    )


def refused_words(event: LlmCallEvent) -> str | None:
    """A model call refused as too long, in words (None for any other call): the limit the
    server named, when it named one, and that the request is compressed and tried again."""
    if event.error is None or not any(a.outcome == CONTEXT_TOO_LONG for a in event.attempts):
        return None
    limit = limit_in(event.error)
    said = f" (its server's limit: {limit:,} tokens)" if limit is not None else ""
    return (
        f"⇲ {event.provider} refused {event.node}'s request as too long{said}: "
        "compressing its view and trying once more"
    )


def describe_wait(
    interrupt: InterruptEvent, choices: Sequence[str], channels: Collection[str] = ()
) -> str:
    """Who waits for whom at this interrupt, in one line (``channels``: the flow's channels)."""
    frm, to = interrupt.from_, interrupt.to
    if interrupt.reason == "budget":
        return f"the budget waits for you: a new limit lets {to} go on, no ends the run"
    if interrupt.reason == "manual_select":
        return f"{frm} waits for you to name who speaks next (one of: {', '.join(choices)})"
    if interrupt.reason == "tool_approval":
        call: dict[str, Any] = interrupt.tool_call or {}
        arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
        return f"{frm} asks to run {call.get('name')}({arguments}): answer yes to run it"
    if interrupt.reason == "tool_plan":
        return f"{frm} asks to run {plan_text(interrupt.tool_calls or ())}: answer yes to run them"
    if frm in channels:  # a member of the channel said INTERRUPT: the person answers it
        return f"{to} said INTERRUPT in {frm} and waits for you: your answer goes to {to}"
    return f"{to} waits for {frm}: answer as {frm}"


def empty_line_hint(interrupt: InterruptEvent) -> str:
    """What to type instead of the empty line (or ``/let``) that is no answer here."""
    if interrupt.reason == "manual_select":
        return "an empty line names no one: type the name of who speaks next"
    if interrupt.reason == "budget":
        return "an empty line is no answer: type a new limit, or no"
    if interrupt.reason in ("tool_approval", "tool_plan"):
        return "an empty line is no answer: type yes or no (other text refuses, as the reason)"
    who = interrupt.from_
    return f"an empty line is no answer: type one, or {LET} to let {who} answer by itself"


def ending(event: TerminateEvent, said_last: str | None) -> str:
    """How the run ended, naming who said TERMINATE when someone did."""
    if event.reason == "TERMINATE" and said_last is not None:
        return f"terminated: {said_last} said TERMINATE"
    return f"terminated at {event.node} ({event.reason or 'done'})"


def hook_note(event: HookEvent) -> str | None:
    """A hook's refusal or change, in a line (an allow is not worth one)."""
    if event.decision == "allow":
        return None
    what = f"{event.name}'s call" if event.name else f"the message to {event.node}"
    if event.decision == "refuse":
        return f"  hook {event.hook} refused {what}: {_short(event.reason or '')}"
    changed = "arguments" if event.stage == "before_tool" else "result"
    changed = changed if event.name else "text"
    return f"  hook {event.hook} changed the {changed} of {what}"


def plan_text(calls: Sequence[dict[str, Any]]) -> str:
    """The calls of a plan, numbered: ``1. read({"path": "a"}) 2. write(...)``."""
    return " ".join(
        f"{number}. {call.get('name')}({json.dumps(call.get('arguments', {}), ensure_ascii=False)})"
        for number, call in enumerate(calls, 1)
    )


def _hint(interrupt: InterruptEvent) -> str:
    if interrupt.reason == "budget":
        return "(a number above what was spent, or no to end the run; Ctrl-C leaves it paused)"
    if interrupt.reason == "manual_select":
        return "(a name; Ctrl-C leaves the run paused)"
    if interrupt.reason == "tool_approval":
        return (
            "(yes or y runs it, no or n refuses, other text refuses with it as the reason; "
            "Ctrl-C leaves the run paused)"
        )
    if interrupt.reason == "tool_plan":
        return (
            "(yes or y runs them all, no or n or other text refuses them all; "
            "Ctrl-C leaves the run paused)"
        )
    return f"({LET}: {interrupt.from_} answers by itself; Ctrl-C leaves the run paused)"


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _wait_for_a_line(stream: Any) -> None:
    """Returns once ``stream`` has input, returning to Python often while it waits.

    Ctrl-C is delivered to any thread of the process. When it lands on a worker
    thread, a main thread blocked inside ``input()`` is never woken, and the
    prompt would ignore the key. Waiting in short ``select`` slices lets Python
    run its signal handler within a fraction of a second whichever thread the
    signal reached. A terminal in canonical mode is readable only once a whole
    line (or end of file) is there, so ``input()`` then returns at once.
    """
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests, embedding): input() alone will do
    while True:
        readable, _, _ = select.select([descriptor], [], [], 0.2)
        if readable:
            return
