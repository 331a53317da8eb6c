"""``roost chat FLOW``: a conversation loop on one run, for a person at a terminal.

Each line typed continues the run (the first one starts it); lines starting
with ``/`` are commands: /new, /runs, /switch ID, /rename TITLE, /retry,
/fork SEQ, /show, /help, /quit. The prompt names who the person speaks as.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, NamedTuple

import typer
from rich.markup import escape

from roost.cli.app import app
from roost.cli.logs import child_logs, memory_for, new_run_id, new_run_log, open_run, open_store
from roost.errors import RoostError, UsageError
from roost.eventlog import EventLog
from roost.events import InterruptEvent
from roost.flow.models import Flow

QUIT = ("/quit", "/exit")


class Command(NamedTuple):
    """One /command: how it is written in /help, what it does, and the code that does it."""

    usage: str
    does: str
    run: Callable[[str], None]


@app.command()
def chat(
    flow_path: Annotated[str, typer.Argument(metavar="FLOW", help="The flow file to chat with.")],
    from_: Annotated[str | None, typer.Option("--from", help="Who you speak as.")] = None,
    to: Annotated[str | None, typer.Option("--to", help="Who you speak to first.")] = None,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Run store URL (default: ROOST_DB or .roost/roost.db)."),
    ] = None,
) -> None:
    """Chat with FLOW: each line you type continues one stored run."""
    from roost.loading import load_flow

    ChatLoop(load_flow(flow_path), db=db, from_=from_, to=to).loop()


class ChatLoop:
    """The state of one chat: the current run and how lines and commands act on it."""

    def __init__(self, flow: Flow, *, db: str | None, from_: str | None, to: str | None) -> None:
        from roost.cli.console import RunConsole

        self.flow = flow
        self.db = db
        self.route = (from_, to)
        self.out = RunConsole.for_flow(flow)
        self.loop_ = asyncio.new_event_loop()
        # /help is made from this table, so it lists exactly the commands there are.
        commands = [
            Command("/new", "start a new run of this flow", lambda _: self.new()),
            Command("/runs", "list the stored runs of this flow", lambda _: self.list_runs()),
            Command("/switch ID", "continue another stored run", self.switch),
            Command("/rename TITLE", "give this run a title", self.rename),
            Command(
                "/retry",
                "retry a run stopped at an error",
                lambda _: self.step(lambda runner: runner.retry()),
            ),
            Command(
                "/fork SEQ",
                "branch off this run before event SEQ and continue the branch",
                self.fork,
            ),
            Command("/show", "print this run's transcript", lambda _: self.show()),
            Command(
                "/compact",
                "compress each agent's view of the history now (the log keeps it all)",
                lambda _: self.compact(),
            ),
            Command(
                "/info",
                "this run's tokens, cost and each agent's context against its window",
                lambda _: self.info(),
            ),
            Command(
                "/memory",
                "what the agents of this flow remember across runs",
                lambda _: self.memory(),
            ),
            Command("/help", "this help", lambda _: self.help()),
        ]
        self.commands = {command.usage[1:].split()[0]: command for command in commands}
        self.new()

    def attach(self, flow: Flow, log: EventLog) -> None:
        from roost.cli.tracing import traced
        from roost.engine import Runner

        self.flow, self.log = flow, log
        self.out.use_flow(flow)
        self.runner = Runner(
            flow, log, on_event=traced(self.out.on_event, log), on_text=self.out.on_text,
            child_log=child_logs(self.db), memory=memory_for(flow, self.db),
        )  # fmt: skip
        status = self.runner.state.status
        how = ": the first line you type starts it" if status == "new" else ""
        self.out.out.print(f"[dim]run {log.run_id} of {escape(flow.name)} ({status}{how})[/]")

    def new(self) -> None:
        self.attach(self.flow, new_run_log(self.flow, events_path=None, db=self.db))

    def loop(self) -> None:
        """Reads lines until /quit or the end of input."""
        try:
            while True:
                self.out.end_line()  # a prompt never continues a line of streamed text
                try:
                    line = self.out.out.input(self.prompt())
                except EOFError:
                    break
                if line.strip() in QUIT:
                    break
                try:
                    self.handle(line)
                except RoostError as error:
                    self.out.out.print(f"[red]{escape(str(error))}[/]")
        except KeyboardInterrupt:
            self.out.out.print()
        finally:
            self.loop_.close()
        self.out.out.print(f"[dim]run {self.log.run_id} is stored[/]")

    def prompt(self) -> str:
        """The prompt: who the next line is said as, and to whom; a bare one when no line is."""
        state = self.runner.state
        if state.status == "paused" and isinstance(state.pending, InterruptEvent):
            return self.out.prompt(state.pending)
        if state.status == "new":
            return self.out.prompt(None, self.start_route())
        return self.out.prompt(None)

    def start_route(self) -> tuple[str, str] | None:
        """Who the first line is said as, and to whom (--from and --to, else the flow's start)."""
        frm, to = self.route
        start = self.flow.start
        frm = frm or (start.from_ if start else None)
        to = to or (start.to if start else None)
        return (frm, to) if frm and to else None

    def choices(self) -> tuple[str, ...]:
        """The names a person may give at a channel's manual choice; none at other interrupts."""
        from roost.nodes.directors import candidates

        pending, state = self.runner.state.pending, self.runner.state
        if isinstance(pending, InterruptEvent) and pending.reason == "manual_select":
            return candidates(self.flow, state, pending.from_)
        return ()

    def help(self) -> None:
        lines = ["type a message to continue the run (the first one starts it)"]
        lines += [f"{c.usage:<15} {c.does}" for c in self.commands.values()]
        lines.append(f"{QUIT[0]:<15} leave (the run stays stored)")
        self.out.out.print(escape("\n".join(lines)))

    def handle(self, line: str) -> None:
        if line.startswith("/"):
            name, _, argument = line[1:].partition(" ")
            command = self.commands.get(name.strip())
            if command is None:
                raise UsageError(f"no command /{name}; /help lists them")
            command.run(argument.strip())
            return
        self.say(line)

    def say(self, text: str) -> None:
        state = self.runner.state
        if state.status == "new":
            frm, to = self.route
            self.step(lambda runner: runner.start(text, from_=frm, to=to))
        elif state.status == "paused":
            self.step(lambda runner: runner.continue_(text))
        elif state.status in ("error", "running"):
            raise UsageError("the run stopped before finishing a step: /retry redoes it")
        else:
            raise UsageError("this run has ended: /new starts another, /fork SEQ branches off")

    def step(self, action: Callable[..., Awaitable[object]]) -> None:
        from roost.cli.console import describe_wait

        self.loop_.run_until_complete(action(self.runner))
        self.out.end_line()
        state = self.runner.state
        if state.status == "paused" and isinstance(state.pending, InterruptEvent):
            pending = state.pending
            self.out.out.print(f"[bold]{escape(describe_wait(pending, self.choices()))}[/]")
        elif state.status == "error":
            self.out.out.print("[dim]stopped at an error: /retry tries again[/]")
        elif state.status == "terminated":
            self.out.out.print("[dim]the run has ended: /new starts another[/]")

    def list_runs(self) -> None:
        for run in open_store(self.db).runs(flow=self.flow.name):
            title = f" — {run.title}" if run.title else ""
            mark = "*" if run.id == self.log.run_id else " "
            self.out.out.print(
                f"{mark} {run.id}  {run.status:<10} {run.messages:>4} messages{escape(title)}"
            )

    def switch(self, ref: str) -> None:
        if not ref:
            raise UsageError("/switch needs a run id")
        log, flow = open_run(ref, db=self.db)
        self.attach(flow, log)

    def rename(self, title: str) -> None:
        if not title:
            raise UsageError("/rename needs a title")
        open_store(self.db).rename(self._stored_id(), title)
        self.out.out.print(f"[dim]run {self.log.run_id} is now “{escape(title)}”[/]")

    def fork(self, argument: str) -> None:
        from roost.cli.logs import flow_of

        # isdigit() also accepts '²'; an event number is ASCII digits only.
        if not (argument.isascii() and argument.isdigit()):
            raise UsageError("/fork needs an event number (see /show)")
        store = open_store(self.db)
        log = store.fork(self._stored_id(), int(argument), new_run_id())
        flow = flow_of(log.load(), log.run_id)
        log.materialize()
        self.attach(flow, log)

    def show(self) -> None:
        from roost.cli.transcript import print_transcript

        print_transcript(self.out.out, self.log.load(), ref=self.log.run_id, db=self.db)

    def compact(self) -> None:
        from roost.cli.transcript import compact_text
        from roost.events import CompactEvent

        since = self.runner.state.next_seq
        self.loop_.run_until_complete(self.runner.compact())
        made = [e for e in self.log.load() if e.seq >= since and isinstance(e, CompactEvent)]
        for event in made:
            self.out.out.print(f"[dim]{compact_text(event)}[/]")
        if not made:
            self.out.out.print("[dim]nothing to compress: each view is as short as it gets[/]")

    def info(self) -> None:
        from roost.cli.console import context_lines, usage_line

        state = self.runner.state
        lines = [f"run {self.log.run_id} of {self.flow.name} ({state.status})"]
        lines.append(usage_line(state.usage, self.log.load()))
        lines += context_lines(self.flow, state) or ["context: no agent has spoken yet"]
        self.out.out.print(escape("\n".join(lines)))

    def memory(self) -> None:
        if self.flow.memory is None:
            raise UsageError("this flow has no memory: section")
        # The run's own view: a fork's is the memory of its fork point and its own writes.
        bank = self.runner.memory or memory_for(self.flow, self.db)
        scopes = dict.fromkeys(self.flow.memory_scope(agent) for agent in self.flow.agents)
        lines = []
        for scope in scopes:
            entries = bank.entries(scope) if bank is not None and scope else []
            lines += [f"{scope}: {e.key} ({e.importance:g}): {e.content}" for e in entries]
        self.out.out.print(escape("\n".join(lines) or "nothing is remembered yet"))

    def _stored_id(self) -> str:
        if not self.log.load():
            raise UsageError("this run has no message yet")
        return self.log.run_id
