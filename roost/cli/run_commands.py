"""``roost run``, ``roost continue`` and ``roost retry`` (docs/runs.md).

Exit status: 0 terminated or paused at an interrupt, 3 stopped at an error,
2 invalid flow or use (or a run that cannot be continued or retried), 1 anything else.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roost.cli.app import DbOption, app, loading
from roost.cli.console import RunConsole, describe_wait
from roost.cli.tracing import traced
from roost.driving import Step, drive
from roost.engine import Runner
from roost.engine.interpreter import start_route
from roost.errors import EventLogError, ImageError, RunStateError, UsageError
from roost.events import ErrorEvent, Event, InterruptEvent, RunStartEvent
from roost.flow.budget_checks import check_budget
from roost.flow.models import Flow
from roost.nodes.directors import candidates
from roost.ports import EventLog
from roost.providers import limits
from roost.runstate import RunState
from roost.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.engine.images import LoadedImage
    from roost.runview import Pause
    from roost.store.leases import Stepping

AnswerOption = Annotated[
    list[str] | None,
    typer.Option("--answer", help='Answers the next interrupt; repeat for more. "" = no feedback.'),
]
NoInputOption = Annotated[
    bool, typer.Option("--no-input", help="Never ask: leave the run paused at the next interrupt.")
]
ImageOption = Annotated[
    list[str] | None,
    typer.Option(
        "--image",
        metavar="PATH",
        help="An image (PNG, JPEG, GIF or WebP file, or an http(s) URL) to send with the "
        "message; repeat for more.",
    ),
]
BudgetOption = Annotated[
    float | None,
    typer.Option(
        "--budget",
        metavar="COST",
        help="The run's cost limit in US dollars: a model call that would pass it is not made.",
    ),
]
FlowFileOption = Annotated[
    str | None,
    typer.Option(
        "--flow",
        metavar="FILE",
        help="Go on under this flow file instead (it must keep every node the run has used).",
    ),
]


@app.command()
def run(
    flow_path: Annotated[str, typer.Argument(metavar="FLOW", help="The flow file to run.")],
    message: Annotated[
        str | None, typer.Option("--message", help="Overrides start.content.")
    ] = None,
    from_: Annotated[
        str | None, typer.Option("--from", help="Who sends the start message.")
    ] = None,
    to: Annotated[str | None, typer.Option("--to", help="Who receives it.")] = None,
    answer: AnswerOption = None,
    events: Annotated[
        Path | None,
        typer.Option("--events", help="Also write the event log to this JSON Lines file."),
    ] = None,
    no_input: NoInputOption = False,
    db: DbOption = None,
    image: ImageOption = None,
    budget: BudgetOption = None,
) -> None:
    """Start a run of FLOW."""
    with loading():  # the run store's SQL layer and the engine
        from roost.cli.logs import new_run_log
        from roost.engine.images import start_images
        from roost.flow import read_flow

    flow = read_flow(flow_path)
    _check_tools(flow)
    start_route(flow, message, from_, to)  # a bad route fails before a run is stored
    from roost.providers.keys import refuse_keyless

    refuse_keyless(flow)
    if budget is not None:
        check_budget(flow, budget)
    # --image replaces the flow's start.images, as --message replaces its text; read and
    # checked before a run is stored.
    images = _load_images(image) if image is not None else start_images(flow)
    log = new_run_log(flow, events_path=events, db=db)
    session = TerminalSession(flow, log, db=db, answers=list(answer or []), no_input=no_input)
    session.out.out.print(f"[dim]run {log.run_id} of {flow.name}[/]")
    if budget is not None:
        session.runner().set_budget(budget)
    session.finish(
        session.drive(lambda runner: runner.start(message, from_=from_, to=to, images=images))
    )


@app.command(name="continue")
def continue_command(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="Run id or JSON Lines event file.")],
    answer: AnswerOption = None,
    no_input: NoInputOption = False,
    flow_file: FlowFileOption = None,
    db: DbOption = None,
    image: ImageOption = None,
    budget: BudgetOption = None,
) -> None:
    """Continue a run paused at an interrupt."""
    images = _load_images(image or [])  # read and checked before anything is stored
    log, flow = open_with_flow(run_ref, db, flow_file)
    if budget is not None:
        check_budget(flow, budget)
    answers = list(answer or [])
    session = TerminalSession(flow, log, db=db, answers=answers, no_input=no_input, ref=run_ref)
    if flow_file is not None:
        session.runner().follow(flow)
    state = session.runner().state
    if budget is not None:
        answer = _with_budget(session.runner(), budget, answers)
        answers = list(answer or [])
    if answer is None and not session.interactive:
        _require_answer(state, session)
    if not answers:  # the terminal answers the pause, the images with that answer
        session.finish(session.drive(None, images=images))
        return
    # The first --answer continues the run whatever it is at (a run not paused refuses it).
    first = answers.pop(0)
    session.finish(session.drive(lambda runner: runner.continue_(first, images=images)))


@app.command()
def retry(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="Run id or JSON Lines event file.")],
    answer: AnswerOption = None,
    no_input: NoInputOption = False,
    flow_file: FlowFileOption = None,
    db: DbOption = None,
) -> None:
    """Retry a run stopped at an error (or left running by a process that stopped)."""
    log, flow = open_with_flow(run_ref, db, flow_file)
    session = TerminalSession(
        flow, log, db=db, answers=list(answer or []), no_input=no_input, ref=run_ref
    )
    if flow_file is not None:
        session.runner().follow(flow)
    session.finish(session.drive(lambda runner: runner.retry()))


def _with_budget(runner: Runner, cost: float, answers: list[str]) -> list[str] | None:
    """``--budget COST`` on continue: the answer to a budget asking for a new cost limit,
    else the run's cost limit from now on (the answers as they were)."""
    from roost.engine.budget import asked_budget

    asked = asked_budget(runner.state)
    if asked is not None and asked.limit == "cost" and not answers:
        return [repr(cost)]
    runner.set_budget(cost)
    return answers or None


def open_with_flow(run_ref: str, db: str | None, flow_file: str | None) -> tuple[EventLog, Flow]:
    """The run's log and the flow it goes on under: ``flow_file`` when given, else its own.

    A ``flow_file`` is checked as ``roost run`` checks a flow, and must keep every
    node the run's history names; without one, a flow file changed since the run
    recorded it gets a note naming ``--flow``.
    """
    from roost.cli.logs import open_log
    from roost.engine.flows import flow_in_log

    log = open_log(run_ref, db=db)
    _warn(log)
    events = log.load()
    if flow_file is None:
        flow = flow_in_log(events, run_ref)
        _note_changed_file(flow, run_ref)
        return log, flow
    if not events or not isinstance(events[0], RunStartEvent):
        raise EventLogError(f"{run_ref}: the run has no run_start event")
    return log, flow_to_follow(flow_file, events)


def flow_to_follow(flow_file: str, events: list[Event]) -> Flow:
    """``flow_file`` loaded and checked to take over the run whose events are ``events``."""
    from roost.engine.flows import check_keeps_history
    from roost.flow import read_flow

    flow = read_flow(flow_file)
    _check_tools(flow)
    check_keeps_history(flow, events)
    return flow


_FLOW_FILE_LIMIT = 16 * 2**20  # bytes; far more than any flow file


def _note_changed_file(flow: Flow, run_ref: str) -> None:
    """One line when the file the run's flow came from now holds another text."""
    from roost.engine.flows import text_hash

    path = Path(flow.path)
    try:
        # The path comes from the run's log: read only a regular file of a flow's size.
        small = path.is_file() and path.stat().st_size <= _FLOW_FILE_LIMIT
        text = path.read_text(encoding="utf-8") if small else None
    except (OSError, UnicodeDecodeError):
        return
    if text is None or text_hash(text) == text_hash(flow.text):
        return
    shown = shlex.quote(flow.path)
    sys.stderr.write(
        f"roost: note: {flow.path} has changed since run {run_ref} recorded it; the run goes "
        f"on with the recorded flow (to follow the file instead, add --flow {shown})\n"
    )


class TerminalSession:
    """One command's use of a Runner: answers from --answer, then the terminal, or a pause."""

    def __init__(
        self,
        flow: Flow,
        log: EventLog,
        *,
        db: str | None,
        answers: list[str],
        no_input: bool,
        ref: str | None = None,
    ) -> None:
        self.flow = flow
        self.log = log
        self.db = db
        self.answers = answers
        self.interactive = not no_input and sys.stdin.isatty()
        self.ref = ref or log.run_id
        self.out = RunConsole.for_flow(flow, step=self._step)
        self.out.error_told_at_end = True  # finish() says it, once
        self.workspace = Workspace(db)  # where its sub-flow runs and memory are kept
        self._runner: Runner | None = None
        self.prompted = False  # the last answer was typed at the terminal (not an --answer)
        self._held: Stepping | None = None  # the leases this command holds (see _stepping)

    def _hold(self, run_id: str) -> None:
        """Holds a sub-flow run's lease while this command runs."""
        if self._held is not None:
            self._held.hold(run_id)

    def _step(self) -> tuple[str, str] | None:
        return self._runner.state.step if self._runner is not None else None

    def runner(self) -> Runner:
        if self._runner is None:
            self._runner = self.workspace.runner(
                self.flow,
                self.log,
                memory=self.workspace.memory_for(self.flow),
                hold=self._hold,
                on_event=traced(self.out.on_event, self.log),
                on_text=self.out.on_text,
            )
        return self._runner

    def drive(self, first: Step | None, *, images: Sequence[LoadedImage] = ()) -> RunState:
        """Takes the first step (None: the run's pause is answered first), then answers
        pauses while answers or a person are there; ``images`` go with the first answer."""
        stepping = self._stepping()
        try:
            return self._drive(first, images)
        finally:
            if stepping is not None:
                stepping.close()

    def _stepping(self) -> Stepping | None:
        """The leases this command holds on its stored run and its sub-flow runs, in a
        store a server shares, so that the server does not step them too meanwhile."""
        store = getattr(self.log, "store", None)
        if store is None or not hasattr(store, "engine"):
            return None  # a run file: no server steps it
        from roost.store.leases import Stepping

        who = f"the command line (pid {os.getpid()} on {socket.gethostname()})"
        stepping = Stepping(store, who[:120])
        stepping.hold(self.log.run_id)
        self._held = stepping
        return stepping

    def _drive(self, first: Step | None, images: Sequence[LoadedImage]) -> RunState:
        runner = self.runner()

        async def go() -> RunState:
            return await drive(runner, first, self.answer, images=images, refused=self._refused)

        limits.waits_told.append(self.out.on_limit_wait)
        try:
            return _run_interruptibly(go)
        except KeyboardInterrupt:
            self.out.out.print()
            state = runner.state
            if state.status == "paused":
                return state
            sys.stderr.write(
                f"roost: interrupted; the run is saved. Resume it with: {self.command('retry')}\n"
            )
            raise SystemExit(1) from None
        finally:
            limits.waits_told.remove(self.out.on_limit_wait)
            self.out.flush()  # the run's lines before any error line of the command's

    async def answer(self, pause: Pause) -> str | None:
        """The terminal's answer to ``pause``: the next --answer, else what the person types
        (None: no one to ask, or they left the run paused with Ctrl-C or the end of input)."""
        self.prompted = False
        if self.answers:
            return self.answers.pop(0)
        if not self.interactive:
            return None
        state = self.runner().state
        try:
            # Asked on the loop's own thread, so that Ctrl-C interrupts the prompt; nothing
            # else runs while the run waits for its person.
            text = _prompt(lambda: self.out.ask(pause.interrupt, state, pause.choices))
        except (KeyboardInterrupt, EOFError):
            return None
        self.prompted = True
        return text

    def _refused(self, error: RunStateError) -> bool:
        """A typed answer the run refused is shown, and the person asked again."""
        if self.prompted:
            self.out.out.print(f"[red]{error}[/]")
        return self.prompted

    def command(self, verb: str, answer: str | None = None, flow: str | None = None) -> str:
        """The exact command line that does ``verb`` to this run."""
        parts = ["roost", verb, self.ref]
        if self.db:
            from roost.store.sql import masked_db  # the store's modules load only when used

            parts += ["--db", masked_db(self.db)]  # a password is never printed
        if answer is not None:
            parts += ["--answer", answer]
        if flow is not None:
            parts += ["--flow", flow]
        return shlex.join(parts)

    def choices(self, pending: InterruptEvent) -> tuple[str, ...]:
        """The names a person may give at ``pending`` (a channel's manual choice)."""
        return _choices(self.flow, self.runner().state, pending)

    def finish(self, state: RunState) -> None:
        """Reports how the run stands and exits with its status."""
        self.out.usage(state, self.flow, self.log.load)
        if state.status == "paused" and isinstance(state.pending, InterruptEvent):
            pending = state.pending
            self.out.out.print(
                f"paused: {describe_wait(pending, self.choices(pending), self.flow.channels)}\n"
                f"continue with: {self.command('continue', 'TEXT')}"
            )
        elif state.status == "error" and isinstance(state.pending, ErrorEvent):
            error = state.pending
            sys.stderr.write(
                f"roost: error at {error.from_}: {error.content}\n"
                f"{retry_hint(self.log.load(), error, state.flow_path, self.command)}\n"
            )
            raise SystemExit(3)
        elif state.status == "running":
            sys.stderr.write(
                f"roost: the run stopped mid-step; resume it with: {self.command('retry')}\n"
            )
            raise SystemExit(1)


def retry_hint(
    events: list[Event], error: ErrorEvent, flow_path: str, command: Callable[..., str]
) -> str:
    """How to retry a run stopped at ``error``: with ``--flow`` when the flow caused it.

    ``command(verb, flow=...)`` spells the command line for the run at hand.
    """
    from roost.engine.flows import caused_by_flow

    if not caused_by_flow(events, error):
        return f"retry with: {command('retry')}"
    path = flow_path if flow_path and not flow_path.startswith("<") else "FIXED.yaml"
    return (
        f"retry with: {command('retry', flow=path)} (fix {path} first: this error came "
        "from the flow, not from a model, so the flow as recorded would meet it again)"
    )


def _run_interruptibly(go: Callable[[], Awaitable[RunState]]) -> RunState:
    """Runs ``go`` so that Ctrl-C stops it at once, wherever it is.

    asyncio's own handler only cancels the main task at its next suspension; a
    run whose provider never suspends (the scripted one) would go on to its end.
    A handler of our own makes asyncio leave SIGINT alone, and raises
    KeyboardInterrupt between two bytecodes: a log batch is one write or one
    transaction, so the events already appended stay a clean, resumable prefix.
    """

    from roost.store.interrupts import interrupt_now_or_after_the_batch

    def interrupt(signum: int, frame: object) -> None:
        interrupt_now_or_after_the_batch()  # never between a run's log and its --events copy

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        return asyncio.run(go())  # type: ignore[arg-type]
    finally:
        signal.signal(signal.SIGINT, previous)


def _prompt(ask: Callable[[], str]) -> str:
    """Runs ``ask`` with Python's own Ctrl-C handling (asyncio's would wait for the prompt)."""
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return ask()
    finally:
        signal.signal(signal.SIGINT, previous)


def _choices(flow: Flow, state: RunState, interrupt: InterruptEvent) -> tuple[str, ...]:
    if interrupt.reason == "manual_select" and interrupt.from_ in flow.channels:
        return candidates(flow, state, interrupt.from_)
    return ()


def _require_answer(state: RunState, session: TerminalSession) -> None:
    if state.status != "paused" or not isinstance(state.pending, InterruptEvent):
        raise RunStateError(f"run {session.ref} is {state.status}, not paused at an interrupt")
    pending = state.pending
    waiting = describe_wait(pending, session.choices(pending), session.flow.channels)
    raise UsageError(
        f"run {session.ref} is paused ({waiting})"
        f" and there is no terminal to ask in: answer with {session.command('continue', 'TEXT')}"
        f" or let {pending.from_} answer by itself with {session.command('continue', '')}"
    )


def _warn(log: EventLog) -> None:
    """Reports what loading the log skipped (a torn last line of a killed process)."""
    for warning in getattr(log, "warnings", None) or ():
        sys.stderr.write(f"roost: warning: {warning}\n")


def _load_images(refs: list[str]) -> list[LoadedImage]:
    """The images ``--image`` names, each read and checked (ImageError naming the option)."""
    from roost.engine.images import load_image

    try:
        return [load_image(ref) for ref in refs]
    except ImageError as error:
        raise ImageError(f"--image {error}") from None


def _check_tools(flow: Flow) -> None:
    """Refuses a flow whose tools, hooks or skills cannot work, before anything runs."""
    from roost.errors import FlowError
    from roost.flow.models import lists_file_tools
    from roost.flow.skills import skill_problems

    problems = skill_problems(flow)
    if flow.tools or lists_file_tools(flow) or flow.hook_entries():
        from roost.tools import check_flow_tools

        problems = [*check_flow_tools(flow), *problems]
    if any(problem.severity == "error" for problem in problems):
        raise FlowError(problems)
