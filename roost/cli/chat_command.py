"""``roost chat FLOW``: a conversation loop on one run, for a person at a terminal.

It goes on with the flow's latest paused run (``--new``: a new run); each line
typed continues the run (the first one starts it); lines starting with ``/``
are commands (``/help`` lists them). The prompt names who the person speaks
as. A step in flight stops at ``/stop`` or Ctrl-C, and the chat goes on.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer
from rich.markup import escape

from roost.approval import approval
from roost.cli._chat_steps import (
    LOOK,
    after_stop,
    close_loop,
    ctrl_c_stops,
    is_terminal,
    was_stopped,
)
from roost.cli.app import DbOption, app
from roost.cli.chat_input import STOP, TypedLines
from roost.cli.console import LET
from roost.cli.logs import new_run_id, new_run_log, open_run, open_store
from roost.errors import RoostError, UsageError
from roost.events import InterruptEvent
from roost.flow.models import Flow
from roost.ports import EventLog

if TYPE_CHECKING:
    from roost.store.sql import SqlStore

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
    new: Annotated[
        bool, typer.Option("--new", help="Start a new run instead of the latest paused one.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Chat with FLOW: each line you type continues one stored run."""
    from roost.loading import load_flow
    from roost.providers.keys import refuse_keyless

    flow = load_flow(flow_path)
    refuse_keyless(flow)  # before a run is stored: its first model call could only fail
    ChatLoop(flow, db=db, from_=from_, to=to, new=new).loop()


class ChatLoop:
    """The state of one chat: the current run and how lines and commands act on it."""

    def __init__(
        self, flow: Flow, *, db: str | None, from_: str | None, to: str | None, new: bool = False
    ) -> None:
        from roost.cli.console import RunConsole
        from roost.workspace import Workspace

        self.flow = flow
        self.db = db
        self.workspace = Workspace(db)  # where its runs' sub-flow runs and memory are kept
        self.route = (from_, to)
        self.out = RunConsole.for_flow(flow)
        self.loop_ = asyncio.new_event_loop()
        self.lines = TypedLines(sys.stdin)
        self.typed_at_a_terminal = is_terminal(sys.stdin)
        self.stopping = False  # /stop or Ctrl-C asked to stop the step in flight
        # /help is made from this table, so it lists exactly the commands there are.
        commands = self._run_commands() + self._view_commands() + self._stored_run_commands()
        self.commands = {command.usage[1:].split()[0]: command for command in commands}
        if new:
            self.new()
        else:
            self.resume()

    def _run_commands(self) -> list[Command]:
        """The commands that pick, start or go on with a run."""
        return [
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
            Command(
                LET,
                "let the node you are asked to answer as answer by itself (its own model)",
                lambda _: self.let(),
            ),
        ]

    def _view_commands(self) -> list[Command]:
        """The commands that show the run, or act on its step in flight."""
        return [
            Command("/show", "print this run's transcript", lambda _: self.show()),
            Command(
                "/compact",
                "compress each agent's view of the history now (the log keeps it all)",
                lambda _: self.compact(),
            ),
            Command(
                "/info",
                "this run's tokens, cost, models, each agent's context against its window, "
                "and its budgets: spent and left",
                lambda _: self.info(),
            ),
            Command(
                "/memory",
                "what the agents of this flow remember across runs",
                lambda _: self.memory(),
            ),
            Command("/mcp", "the flow's MCP servers and their tools", lambda _: self.mcp()),
            Command("/dump [FILE]", "write this run's transcript as Markdown", self.dump),
            Command(STOP, "stop the step in flight (type it, or Ctrl-C, while it runs)", self.stop),
        ]

    def _stored_run_commands(self) -> list[Command]:
        """The commands that archive or delete the stored run, and /help."""
        return [
            Command(
                "/archive",
                "archive this run (hidden from roost runs) and start a new one",
                lambda _: self.archive(),
            ),
            Command("/unarchive", "take this run out of the archive", lambda _: self.unarchive()),
            Command(
                "/delete",
                "delete this run and its events, once you confirm",
                lambda _: self.delete(),
            ),
            Command("/help", "this help", lambda _: self.help()),
        ]

    def attach(self, flow: Flow, log: EventLog, *, said: str | None = None) -> None:
        """Makes ``log`` the chat's run, going on under ``flow``; ``said`` replaces the line
        that names it."""
        from roost.cli.tracing import traced

        self.flow, self.log = flow, log
        self.out.use_flow(flow)
        self.runner = self.workspace.runner(
            flow, log, memory=self.workspace.memory_for(flow),
            on_event=traced(self.out.on_event, log), on_text=self.out.on_text,
        )  # fmt: skip
        status = self.runner.state.status
        how = ": the first line you type starts it" if status == "new" else ""
        said = said or f"run {log.run_id} of {flow.name} ({status}{how})"
        self.out.out.print(f"[dim]{escape(said)}[/]")

    def new(self) -> None:
        self.attach(self.flow, new_run_log(self.flow, events_path=None, db=self.db))

    def resume(self) -> None:
        """Goes on with the flow's paused run that was active last; a new run when none is."""
        from roost.cli._chat_session import run_to_resume
        from roost.cli.transcript import age
        from roost.engine.flows import text_hash

        run = run_to_resume(open_store(self.db), self.flow)
        if run is None:
            self.new()
            return
        log, flow = open_run(run.id, db=self.db)
        title = f" “{run.title}”" if run.title else ""
        said = (
            f"resumed run {run.id}{title} of {run.flow_name} (paused, {run.messages} messages, "
            f"last active {age(run.updated)} ago): /new starts a new one"
        )
        if text_hash(flow.text) != text_hash(self.flow.text):
            said += f"; it goes on as it was recorded, not as {self.flow.path} is now"
        self.attach(flow, log, said=said)

    def loop(self) -> None:
        """Reads lines until /quit or the end of input."""
        try:
            while True:
                self.out.end_line()  # a prompt never continues a line of streamed text
                self.out.out.print(self.prompt(), end="")
                line = self.lines.next()
                if line is None:
                    self.out.out.print()
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
            close_loop(self.loop_)
        cut = self.runner.state.status == "running"
        redo = f" (a step was cut short: roost retry {self.log.run_id} redoes it)" if cut else ""
        self.out.out.print(f"[dim]run {self.log.run_id} is stored{redo}[/]")

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
        if not line.strip():
            self.empty_line()
            return
        if line.startswith("/"):
            name, _, argument = line[1:].partition(" ")
            command = self.commands.get(name.strip())
            if command is None:
                raise UsageError(f"no command /{name}; /help lists them")
            command.run(argument.strip())
            return
        self.say(line)

    def empty_line(self) -> None:
        """An empty line is no answer and starts nothing: it says what would be one."""
        from roost.cli.console import empty_line_hint

        state = self.runner.state
        if state.status == "paused" and isinstance(state.pending, InterruptEvent):
            said = empty_line_hint(state.pending)
        elif state.status == "new":
            said = "an empty line is no message: type one to start the run"
        else:
            return
        self.out.out.print(f"[dim]{escape(said)}[/]")

    def let(self) -> None:
        """The empty feedback: the node the person is asked to answer as answers by itself."""
        pending = self.runner.state.pending
        if self.runner.state.status != "paused" or not isinstance(pending, InterruptEvent):
            raise UsageError(f"{LET} answers a person's turn, and no one waits for one now")
        if pending.reason != "human":
            raise UsageError(f"{LET} answers a person's turn; this one waits for {_wants(pending)}")
        self.step(lambda runner: runner.continue_(""))

    def say(self, text: str) -> None:
        state = self.runner.state
        person = not isinstance(state.pending, InterruptEvent) or state.pending.reason == "human"
        # A terminal shows the line as it is typed: its message is not printed again (input
        # from a pipe is shown by nothing else, so there the message is printed).
        echoed = self.typed_at_a_terminal
        if echoed and (state.status == "new" or (state.status == "paused" and person)):
            self.out.typed = text
        if state.status == "new":
            frm, to = self.route
            self.step(lambda runner: runner.start(text, from_=frm, to=to))
        elif state.status == "paused":
            self.step(lambda runner: runner.continue_(text))
        elif was_stopped(state.pending):
            raise UsageError(f"the step was stopped: {after_stop(self.log.load())}")
        elif state.status in ("error", "running"):
            raise UsageError("the run stopped before finishing a step: /retry redoes it")
        else:
            raise UsageError("this run has ended: /new starts another, /fork SEQ branches off")

    def step(self, action: Callable[..., Awaitable[object]]) -> None:
        """Runs one step of the run, stopping it at /stop or Ctrl-C, and says how it ended."""
        from roost.cli.console import describe_wait

        self.stopping = False
        with ctrl_c_stops(self):
            self.loop_.run_until_complete(self._watched(action))
        self.out.end_line()
        state = self.runner.state
        if state.status == "paused" and isinstance(state.pending, InterruptEvent):
            pending = state.pending
            waits = describe_wait(pending, self.choices(), self.flow.channels)
            self.out.out.print(f"[bold]{escape(waits)}[/]")
        elif was_stopped(state.pending) and self.stopping:
            self.out.out.print(f"[dim]stopped: {escape(after_stop(self.log.load()))}[/]")
        elif state.status == "error":
            self.out.out.print("[dim]stopped at an error: /retry tries again[/]")
        elif state.status == "terminated":
            self.out.out.print("[dim]the run has ended: /new starts another[/]")
        if self.stopping and not was_stopped(state.pending):
            self.out.out.print("[dim]the step had finished before it could be stopped[/]")

    async def _watched(self, action: Callable[..., Awaitable[object]]) -> None:
        """Runs ``action`` while watching for /stop typed meanwhile (or Ctrl-C's request)."""
        step = asyncio.ensure_future(action(self.runner))
        while not step.done():
            if self.lines.stop_typed():
                self.stopping = True
            if self.stopping:
                self.runner.cancel()  # nothing until the step is under way; once is enough
            await asyncio.wait({step}, timeout=LOOK)
        step.result()  # a failure of the step (a store error, say) is the command's

    def stop(self, _: str) -> None:
        raise UsageError(f"no step is running: {STOP} (or Ctrl-C) stops one while it runs")

    def list_runs(self) -> None:
        from roost.cli._chat_session import run_list

        for line in run_list(open_store(self.db).runs(flow=self.flow.name), self.log.run_id):
            self.out.out.print(line)

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
        from roost.engine.flows import flow_in_log

        # isdigit() also accepts '²'; an event number is ASCII digits only.
        if not (argument.isascii() and argument.isdigit()):
            raise UsageError("/fork needs an event number (see /show)")
        store = open_store(self.db)
        log = store.fork(self._stored_id(), int(argument), new_run_id())
        flow = flow_in_log(log.load(), log.run_id)
        log.materialize()
        self.attach(flow, log)

    def show(self) -> None:
        from roost.cli.transcript import print_transcript

        print_transcript(self.out.out, self.log.load(), ref=self.log.run_id, db=self.db)

    def compact(self) -> None:
        """Compresses each view now; each compaction is shown as it is recorded (on_event)."""
        from roost.events import CompactEvent

        since = self.runner.state.next_seq
        self.loop_.run_until_complete(self.runner.compact())
        self.out.flush()
        made = [e for e in self.log.load() if e.seq >= since and isinstance(e, CompactEvent)]
        if not made:
            self.out.out.print(
                "[dim]nothing compressed: no agent's view would get shorter "
                "(a compaction that does not shrink a view is not made)[/]"
            )

    def info(self) -> None:
        from roost.cli._chat_session import info_lines

        lines = info_lines(self.flow, self.log.run_id, self.runner.state, self.log.load())
        self.out.out.print(escape("\n".join(lines)))

    def mcp(self) -> None:
        from roost.cli._chat_session import mcp_lines

        self.out.out.print(escape("\n".join(mcp_lines(self.flow))))

    def dump(self, file: str) -> None:
        from roost.cli._chat_session import write_dump

        events = self.log.load()
        if not events:
            raise UsageError("this run has no message yet: nothing to write")
        path = Path(file or f"{self.log.run_id}.md")
        title = self._title()
        write_dump(path, events, title)
        self.out.out.print(f"[dim]wrote run {self.log.run_id} to {escape(str(path))}[/]")

    def archive(self) -> None:
        from roost.store.pruning import archive

        store = open_store(self.db)
        run_id, file = self._stored(store)
        archive(store, run_id)
        also = f" ({file} is left as it is)" if file else ""
        self.out.out.print(
            f"[dim]run {run_id} is archived{escape(also)}: roost runs --all lists it, "
            f"/switch {run_id} then /unarchive brings it back[/]"
        )
        self.new()

    def unarchive(self) -> None:
        from roost.store.pruning import archive

        store = open_store(self.db)
        run_id, _ = self._stored(store)
        if store.run(run_id).archived is None:
            raise UsageError(f"run {run_id} is not archived")
        archive(store, run_id, archived=False)
        self.out.out.print(f"[dim]run {run_id} is out of the archive[/]")

    def delete(self) -> None:
        from roost.cli._chat_session import delete_question
        from roost.store.pruning import family

        store = open_store(self.db)
        run_id, file = self._stored(store)
        runs = family(store, run_id)
        question = delete_question(run_id, runs)
        self.out.out.print(escape(f"{question}? This cannot be undone. [y/N] "), end="")
        answer = self.lines.next()
        if answer is None or not approval(answer).approved:
            self.out.out.print("[dim]nothing deleted[/]")
            return
        events = store.delete([run.id for run in runs])
        also = f"; {file} is left as it is" if file else ""
        count = f"{len(runs)} runs" if len(runs) > 1 else "the run"
        self.out.out.print(f"[dim]deleted {count} ({events} events){escape(also)}[/]")
        self.new()

    def _stored(self, store: SqlStore) -> tuple[str, str | None]:
        from roost.cli._chat_session import stored_id

        if not self.log.load():
            raise UsageError("this run has no message yet: it is not stored")
        return stored_id(self.log, store)

    def _title(self) -> str | None:
        try:
            return open_store(self.db).run(self.log.run_id).title
        except RoostError:
            return None

    def memory(self) -> None:
        if self.flow.memory is None:
            raise UsageError("this flow has no memory: section")
        # The run's own view: a fork's is the memory of its fork point and its own writes.
        from roost.cli._chat_session import memory_lines

        bank = self.runner.memory or self.workspace.memory_for(self.flow)
        lines = memory_lines(self.flow, bank)
        self.out.out.print(escape("\n".join(lines) or "nothing is remembered yet"))

    def _stored_id(self) -> str:
        if not self.log.load():
            raise UsageError("this run has no message yet")
        return self.log.run_id


def _wants(pending: InterruptEvent) -> str:
    """What answers ``pending``, in words, when it is not a person's turn."""
    if pending.reason == "manual_select":
        return "the name of who speaks next"
    return "yes or no"
