"""``roost chat FLOW``: a conversation loop on one run, for a person at a terminal.

Each line typed continues the run (the first one starts it); lines starting
with ``/`` are commands: /new, /runs, /switch ID, /rename TITLE, /retry,
/fork SEQ, /show, /help, /quit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated

import typer
from rich.markup import escape

from roost.cli.app import app
from roost.cli.logs import child_logs, new_run_id, new_run_log, open_run, open_store
from roost.errors import RoostError, UsageError
from roost.eventlog import EventLog
from roost.flow.models import Flow

HELP = """\
type a message to continue the run (the first one starts it)
/new            start a new run of this flow
/runs           list the stored runs of this flow
/switch ID      continue another stored run
/rename TITLE   give this run a title
/retry          retry a run stopped at an error
/fork SEQ       branch off this run before event SEQ and continue the branch
/show           print this run's transcript
/help           this help
/quit           leave (the run stays stored)"""


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
    from roost.flow import load_flow

    ChatLoop(load_flow(flow_path), db=db, from_=from_, to=to).loop()


class ChatLoop:
    """The state of one chat: the current run and how lines and commands act on it."""

    def __init__(self, flow: Flow, *, db: str | None, from_: str | None, to: str | None) -> None:
        from roost.cli.console import RunConsole

        self.flow = flow
        self.db = db
        self.route = (from_, to)
        self.out = RunConsole()
        self.loop_ = asyncio.new_event_loop()
        self.commands: dict[str, Callable[[str], None]] = {
            "new": lambda _: self.new(),
            "runs": lambda _: self.list_runs(),
            "switch": self.switch,
            "rename": self.rename,
            "retry": lambda _: self.step(lambda runner: runner.retry()),
            "fork": self.fork,
            "show": lambda _: self.show(),
            "help": lambda _: self.out.out.print(escape(HELP)),
        }
        self.new()

    def attach(self, flow: Flow, log: EventLog) -> None:
        from roost.engine import Runner

        self.flow, self.log = flow, log
        self.runner = Runner(
            flow, log, on_event=self.out.on_event, on_text=self.out.on_text,
            child_log=child_logs(self.db),
        )  # fmt: skip
        self.out.out.print(f"[dim]run {log.run_id} of {flow.name} ({self.runner.state.status})[/]")

    def new(self) -> None:
        self.attach(self.flow, new_run_log(self.flow, events_path=None, db=self.db))

    def loop(self) -> None:
        """Reads lines until /quit or the end of input."""
        try:
            while True:
                try:
                    line = self.out.out.input("[bold]> [/]")
                except EOFError:
                    break
                if line.strip() in ("/quit", "/exit"):
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

    def handle(self, line: str) -> None:
        if line.startswith("/"):
            name, _, argument = line[1:].partition(" ")
            command = self.commands.get(name.strip())
            if command is None:
                raise UsageError(f"no command /{name}; /help lists them")
            command(argument.strip())
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
        self.loop_.run_until_complete(action(self.runner))
        state = self.runner.state
        if state.status == "error":
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

    def _stored_id(self) -> str:
        if not self.log.load():
            raise UsageError("this run has no message yet")
        return self.log.run_id
