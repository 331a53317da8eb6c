"""``roost runs``, ``show``, ``replay``, ``fork``, ``export`` and ``import`` (docs/runs.md).

RUN is a stored run's id (or a unique prefix) or a run's JSON Lines file; the
store is ``--db``, else ``ROOST_DB``, else ``.roost/roost.db`` in the nearest
folder from here up that has a ``.roost`` folder (here when none has).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from roost.cli import chat_command  # noqa: F401  (registers `roost chat`)
from roost.cli._run_list import print_run_list
from roost.cli.app import app
from roost.cli.logs import (
    file_log,
    is_file_ref,
    new_run_id,
    open_store,
    stored_copy,
)
from roost.cli.transcript import clip, print_transcript
from roost.driving import Step
from roost.errors import (
    EventLogError,
    RoostError,
    RunNotFoundError,
    RunStateError,
    UsageError,
)
from roost.events import Event, RunStartEvent, event_json
from roost.flow.models import Flow
from roost.ports import ImageStore
from roost.runstate import Status
from roost.store.checks import COLUMN_MAX
from roost.store.forks import (
    FileFork,
    Refusal,
    check_fork_point,
    fork_file_path,
    fork_prefix,
    fork_refusal,
)
from roost.store.images import images_folder
from roost.store.jsonl import JsonlLog
from roost.store.sql import RunInfo, SqlStore
from roost.store.sqllog import SqlLog
from roost.store.summary import summarize

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Run store URL (default: ROOST_DB or the nearest .roost/roost.db)."),
]
RunArgument = Annotated[
    str, typer.Argument(metavar="RUN", help="Run id (or unique prefix) or JSON Lines event file.")
]
STATUSES: tuple[str, ...] = get_args(Status)  # the fold's statuses, in its order


def console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def recorded(ref: str, db: str | None) -> tuple[list[Event], RunInfo | None, SqlStore | None]:
    """The events of the run ``ref`` names, with its store row when it is stored."""
    if is_file_ref(ref):
        log = file_log(ref)
        events = log.load()
        for warning in log.warnings:
            print(f"roost: warning: {warning}", file=sys.stderr)
        return events, None, None
    store = open_store(db, create=False)
    run_id = store.find(ref)
    return store.log(run_id).load(), store.run(run_id), store


@app.command()
def runs(
    flow: Annotated[str | None, typer.Option("--flow", help="Only runs of this flow.")] = None,
    status: Annotated[
        str | None,
        typer.Option("--status", help="Only runs in this status: " + ", ".join(STATUSES)),
    ] = None,
    batch: Annotated[
        str | None, typer.Option("--batch", help="Only the rows of this batch (roost batch).")
    ] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Archived runs too (marked archived).")
    ] = False,
    prune: Annotated[
        str | None,
        typer.Option(
            "--prune",
            metavar="DATE",
            help="Delete the archived runs last active before DATE (2026-11-01, or 30d: "
            "30 days ago), after asking.",
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="With --prune: delete without asking.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List stored runs, newest first."""
    if status is not None and status not in STATUSES:
        raise UsageError(f"--status {status!r}: use one of {', '.join(STATUSES)}")
    if prune is not None:
        # What chooses the runs a listing shows; --prune looks at archived runs only.
        listing = (("--status", status), ("--batch", batch), ("--all", all_))
        _prune(db, prune, flow=flow, yes=yes, listing=listing)
        return
    if yes:
        raise UsageError("--yes answers --prune's question: give it with --prune DATE")
    print_run_list(console(), db, flow=flow, status=status, batch=batch, all_=all_)


def _prune(
    db: str | None,
    before: str,
    *,
    flow: str | None,
    yes: bool,
    listing: tuple[tuple[str, object], ...],
) -> None:
    """``roost runs --prune``, refused with an option that chooses what a listing shows."""
    from roost.cli.prune import prune_runs

    extra = [name for name, value in listing if value]
    if extra:
        raise UsageError(f"--prune takes --flow, --yes and --db, not {extra[0]}")

    prune_runs(db, before, flow=flow, yes=yes)


@app.command()
def show(run_ref: RunArgument, db: DbOption = None) -> None:
    """Print a run's transcript, its state and how to continue it."""
    events, info, store = recorded(run_ref, db)
    family: tuple[RunInfo | None, list[RunInfo]] = (None, [])
    if info is not None and store is not None:
        family = (_parent(store, info), store.children(info.id))
    ref = info.id if info is not None else run_ref
    print_transcript(console(), events, ref=ref, db=db, info=info, family=family)


def _parent(store: SqlStore, info: RunInfo) -> RunInfo | None:
    if info.parent is None:
        return None
    try:
        return store.run(info.parent)
    except RunNotFoundError:
        return None


@app.command()
def replay(
    run_ref: RunArgument,
    until: Annotated[
        int | None, typer.Option("--until", help="Compare events up to this seq only.")
    ] = None,
    flow_file: Annotated[
        str | None, typer.Option("--flow", help="Replay with this flow file instead.")
    ] = None,
    live_tools: Annotated[
        bool, typer.Option("--live-tools", help="Run the tools instead of their recorded results.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Re-execute a run against its recorded model answers; exit 4 when it differs."""
    from roost.engine.replay import replay_run

    events, _, _ = recorded(run_ref, db)
    if until is not None and not 0 <= until < len(events):
        raise UsageError(f"--until {until}: the run has events 0 to {len(events) - 1}")
    # Without --flow each part of the run replays under its own recorded flow.
    flow = _load_flow(flow_file) if flow_file else None
    images = _images_of_run(run_ref, db)
    report = asyncio.run(
        replay_run(flow, events, until=until, live_tools=live_tools or None, images=images)
    )
    out = console()
    if report.identical:
        out.print(f"identical: {report.compared} events")
        if report.unfinished:
            out.print(UNFINISHED)
        return
    assert report.difference is not None
    diff = report.difference
    out.print(f"[bold red]diverged[/] at event {diff.index} (of {report.compared} recorded)")
    if report.stopped:
        out.print(f"the replay stopped: {escape(report.stopped)}")
    if report.unfinished:
        out.print(UNFINISHED)
    from roost.cli.request_diff import explain_request

    for line in explain_request(events, flow, diff.recorded, diff.replayed, live_tools, images):
        out.print(line, soft_wrap=True)
    out.print(side_by_side(diff.recorded, diff.replayed))
    raise ReplayDiverged(f"replay diverged at event {diff.index}")


def _images_of_run(ref: str, db: str | None) -> ImageStore:
    """Where the run ``ref`` names keeps its images (a replay reads them from there)."""
    from roost.cli.logs import open_log
    from roost.store.images import images_of

    return images_of(open_log(ref, db=db))


def _copy_file_images(parent: Path, fork: Path, events: list[Event]) -> None:
    """Keeps the images ``events`` name, from the folder of run file ``parent``, in ``fork``'s."""
    from roost.store.images import FolderImages, copy_images

    copy_images(events, FolderImages(images_folder(parent)), FolderImages(images_folder(fork)))


def _import_images(path: Path, events: list[Event], store: SqlStore) -> list[str]:
    """Keeps the images of the run file ``path`` (its ``NAME.images/`` folder) in ``store``."""
    from roost.store.images import FolderImages, SqlImages, copy_images

    return copy_images(events, FolderImages(images_folder(path)), SqlImages(store))


UNFINISHED = (
    "its last step was unfinished: the process stopped during it and the run was not "
    "retried (roost retry finishes it)"
)


class ReplayDiverged(RoostError):
    """A replay that did not give the recorded events (exit 4)."""

    exit_code = 4


def _load_flow(path: str) -> Flow:
    from roost.flow import read_flow

    return read_flow(path)


def side_by_side(old: Event | None, new: Event | None) -> Table:
    """The two events field by field, differing fields marked."""
    from roost.engine.replay import comparable

    left = comparable(old) if old is not None else {}
    right = comparable(new) if new is not None else {}
    table = Table("field", "recorded", "replayed", show_lines=False)
    if old is None or new is None:
        table.add_row("", "(no event)" if old is None else "", "(no event)" if new is None else "")
    for key in [*left, *(k for k in right if k not in left)]:
        a, b = left.get(key, "—"), right.get(key, "—")
        style = "bold red" if a != b else "dim"
        table.add_row(f"[{style}]{key}[/]", escape(_value(a)), escape(_value(b)))
    return table


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clip(text, 600)


@app.command()
def fork(
    run_ref: RunArgument,
    at: Annotated[int, typer.Option("--at", help="Share the events before this seq.")],
    message: Annotated[
        str | None,
        typer.Option("--message", help="The new start message, or the answer at an interrupt."),
    ] = None,
    answer: Annotated[
        list[str] | None, typer.Option("--answer", help="Answers the next interrupt; repeat.")
    ] = None,
    no_input: Annotated[bool, typer.Option("--no-input", help="Never ask a person.")] = False,
    flow_file: Annotated[
        str | None,
        typer.Option(
            "--flow", metavar="FILE", help="Go on under this flow file (keeping the run's nodes)."
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Start a new run that shares the first SEQ events of RUN and goes on live.

    A stored RUN forks in the store; a JSON Lines RUN forks to a new file beside it.
    """
    from roost.cli.run_commands import TerminalSession, flow_to_follow
    from roost.engine.flows import flow_in_log
    from roost.runstate import fold

    new_id = new_run_id()
    events, info, store = recorded(run_ref, db)
    refuse = _fork_refusals(events, with_message=message is not None)
    pending: SqlLog | FileFork
    if info is None or store is None:
        pending = _fork_of_file(run_ref, events, at, new_id, db, refuse)
    else:
        check_fork_point(info.id, len(events), at, lambda: events, refuse)
        pending = store.fork(info.id, at, new_id)
    prefix = pending.load()
    # The fork's flow: --flow FILE (checked against the shared events), else the one in force.
    flow = flow_to_follow(flow_file, prefix) if flow_file else flow_in_log(prefix, run_ref)
    answers = list(answer or [])
    first = _first_step(fold(prefix).status, message, answers)
    pending.materialize()
    if isinstance(pending, FileFork):  # the shared messages' images, beside the new file
        _copy_file_images(Path(run_ref), pending.path, prefix)
    ref = str(pending.path) if isinstance(pending, FileFork) else None
    session = TerminalSession(flow, pending, db=db, answers=answers, no_input=no_input, ref=ref)
    if flow_file is not None:
        session.runner().follow(flow)
    session.out.out.print(f"[dim]{escape(_fork_line(pending, prefix[0], at))}[/]")
    session.finish(session.drive(first))


def _fork_refusals(events: list[Event], *, with_message: bool) -> Refusal:
    """Which fork points the command can go on from, given the run's events and options."""
    from roost.runstate import statuses

    status_at = statuses(events)
    return lambda point: fork_refusal(status_at[point], with_message)


def _fork_of_file(
    ref: str, events: list[Event], at: int, new_id: str, db: str | None, refuse: Refusal
) -> FileFork:
    """The fork of the run in file ``ref``, to be written to a new file beside it."""
    prefix = fork_prefix(events, at, new_id, refuse)
    path = fork_file_path(Path(ref), new_id)
    return FileFork(path, prefix, _stored_twin(ref, events, at, new_id, db))


def _stored_twin(
    ref: str, events: list[Event], at: int, new_id: str, db: str | None
) -> SqlLog | None:
    """The same fork in the store, when the store holds the file's run as the file has it.

    A run started with ``--events`` lives in the store and in its file; a fork of
    the file then lives in both as well, so ``roost runs`` and the parent's family
    list it, and continuing the fork's file keeps both copies going (as it does for
    the parent). A store that lacks the run or holds another history of it (an
    edited file) is left alone.
    """
    parent = stored_copy(Path(ref), events, db)
    if parent is None:
        return None
    return parent.fork(at, new_id)


def _fork_line(pending: SqlLog | FileFork, start: Event, at: int) -> str:
    """The line that names a new fork, its parent and (for a file) where it is written."""
    parent = start.parent if isinstance(start, RunStartEvent) else None
    line = f"run {pending.run_id}: fork of {parent} at {at}"
    if isinstance(pending, FileFork):
        line += f", written to {pending.path}" + (" and the store" if pending.stored else "")
    return line


def _first_step(status: str, message: str | None, answers: list[str]) -> Step | None:
    """What the fork does first, given the state its shared events leave it in (None: the
    terminal answers its pause: ``message`` first, then the answers)."""
    refusal = fork_refusal(status, message is not None)
    if refusal is not None:  # check_fork_point has refused such points already
        raise RunStateError(refusal)
    if status == "new":
        return lambda runner: runner.start(message)
    if status == "paused":
        if message is not None:
            answers.insert(0, message)
        return None
    return lambda runner: runner.retry()


@app.command()
def export(
    run_ref: RunArgument,
    db: DbOption = None,
    otlp: Annotated[
        bool,
        typer.Option(
            "--otlp",
            help="Send the run's spans where the OTEL_* variables say (OTLP) instead.",
        ),
    ] = False,
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="FORMAT", help="otel: print the run as OTLP JSON spans."),
    ] = None,
) -> None:
    """Print a run's events as JSON Lines (or, with --to otel, its spans as OTLP JSON)."""
    if to is not None and to != "otel":
        raise UsageError(f"--to {to!r}: the one format a run is exported to is otel")
    events, _, _ = recorded(run_ref, db)
    if to is not None:
        from roost.importers.otlp import otlp_json

        sys.stdout.write(json.dumps(otlp_json(events), ensure_ascii=False) + "\n")
        return
    if otlp:
        from roost.cli.tracing import send_spans

        send_spans(events)
        return
    sys.stdout.write("".join(event_json(event) + "\n" for event in events))


@app.command(name="import")
def import_command(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A run's JSON Lines file.")],
    db: DbOption = None,
    from_: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="FORMAT",
            help="A run another engine recorded: ag2, agentchat, langgraph or otel.",
        ),
    ] = None,
    thread: Annotated[
        str | None, typer.Option("--thread", help="With --from langgraph: the thread to import.")
    ] = None,
) -> None:
    """Store a run from a JSON Lines file, or one another engine recorded (--from)."""
    if from_ is not None:
        _import_foreign(Path(file), from_, thread, db)
        return
    if thread is not None:
        raise UsageError("--thread picks a LangGraph thread: use it with --from langgraph")
    path = Path(file)
    if not path.is_file():
        raise RunNotFoundError(f"{file}: no such event file")
    log = JsonlLog(path)
    events = log.load()
    if log.warnings:
        raise EventLogError(f"{log.warnings[0]}; nothing imported")
    if not events:
        raise UsageError(f"{file}: holds no events; nothing imported")
    store = open_store(db)
    run_id = events[0].run
    try:
        store.run(run_id)
    except RunNotFoundError:
        missing = _import_images(path, events, store)
        store.import_events(events)
        print(f"imported run {run_id} ({len(events)} events)")
        if missing:
            print(
                f"note: {len(missing)} of its images were not kept: not in "
                f"{images_folder(path)}, or not the images their hashes name"
            )
        if summarize(events).clamped:
            print(
                f"note: run {run_id} reports token counts outside 0 to {COLUMN_MAX:,}; "
                "`roost runs` counts them as the nearest of those, its events keep them as reported"
            )
        return
    raise UsageError(f"run {run_id} is already in the store; nothing imported")


def _import_foreign(path: Path, fmt: str, thread: str | None, db: str | None) -> None:
    """Stores the run another engine recorded in ``path`` under a flow derived from it."""
    from roost.importers import import_run

    if not path.is_file():
        raise UsageError(f"{path}: no such file; nothing imported")
    _, events, notes = import_run(path, fmt, new_run_id(), thread)
    store = open_store(db)
    store.import_events(events)
    said = sum(event.type == "message" for event in events)
    print(f"imported run {events[0].run} from {fmt} ({said} messages, {len(events)} events)")
    for note in notes:
        print(f"note: {note}")
