"""The typer application every command module registers on, and which module holds which command.

A command's module is imported when the command is used, never before: ``roost
--help`` lists the commands from ``COMMANDS`` below and imports none of them, and
``roost validate`` imports the flow language but not the run store's database
layer. Each module registers its commands on ``app`` with ``@app.command()``
when it is imported, as a typer program does; the group below turns a
registered command into a click command on first use.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info

if TYPE_CHECKING:  # typer's own copy of click, whose types its group's methods take
    from typer._click import Command, Context, HelpFormatter
    from typer.models import CommandInfo

# Each command, the module that defines it, and the first line of its docstring
# (what ``roost --help`` shows; tests/cli/test_app.py checks they agree).
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": (
        "roost.cli.flow_commands",
        "Check flow files without running them: one line per problem, exit 2 on any error.",
    ),
    "schema": (
        "roost.cli.flow_commands",
        "Print the JSON Schema of flow files (for editors: roost schema > roost.schema.json).",
    ),
    "render": (
        "roost.cli.render_command",
        "Draw FLOW as a graph; with --run, overlay what the run did (counts, tokens, final state).",
    ),
    "run": ("roost.cli.run_commands", "Start a run of FLOW."),
    "continue": ("roost.cli.run_commands", "Continue a run paused at an interrupt."),
    "retry": (
        "roost.cli.run_commands",
        "Retry a run stopped at an error (or left running by a process that stopped).",
    ),
    "chat": (
        "roost.cli.chat_command",
        "Chat with FLOW: each line you type continues one stored run.",
    ),
    "runs": ("roost.cli.store_commands", "List stored runs, newest first."),
    "show": (
        "roost.cli.store_commands",
        "Print a run's transcript, its state and how to continue it.",
    ),
    "replay": (
        "roost.cli.store_commands",
        "Re-execute a run against its recorded model answers; exit 4 when it differs.",
    ),
    "fork": (
        "roost.cli.store_commands",
        "Start a new run that shares the first SEQ events of RUN and goes on live.",
    ),
    "export": (
        "roost.cli.store_commands",
        "Print a run's events as JSON Lines (or, with --to otel, its spans as OTLP JSON).",
    ),
    "import": (
        "roost.cli.store_commands",
        "Store a run from a JSON Lines file, or one another engine recorded (--from).",
    ),
    "compare": (
        "roost.cli.compare_command",
        "Run every row of INPUTS under two flows and show where their answers differ.",
    ),
    "diff": (
        "roost.cli.diff_command",
        "Show where two runs part and what each did from there; exit 4 when they differ.",
    ),
    "memory": (
        "roost.cli.memory_command",
        "List, search, add or forget the entries of the memory flows keep across runs.",
    ),
    "batch": (
        "roost.cli.batch_command",
        "Run FLOW once for each row of INPUTS (JSON Lines or CSV); run again to finish the rest.",
    ),
    "test": (
        "roost.cli.test_command",
        "Run the cases of flow test files (*.test.yaml); exit 1 when one fails.",
    ),
    "serve": (
        "roost.cli.serve_command",
        "Serve flows over HTTP: an API, live streams and a page to run them in a browser.",
    ),
    "studio": (
        "roost.cli.studio_command",
        "Edit, run and watch the flows of DIR in a browser; edits are written into their YAML.",
    ),
    "schedules": (
        "roost.cli.schedules_command",
        "List the schedules of a serve configuration and the next times each fires.",
    ),
}


# See settle_once_loaded: whether this process is the console script's, and whether the
# command's module is still to be loaded.
_settle = {"own": False, "pending": False}


def settle_once_loaded() -> None:
    """Has the next command module's import end the start-up's pause of the collector.

    The console script (``roost.entry``) turns Python's cyclic garbage collector
    off while it imports: start-up makes tens of thousands of objects (modules,
    classes, pydantic's validators) that live as long as the process, so a
    collection then frees nothing and only costs time. Once the command's module is
    loaded, what is loaded is frozen (``gc.freeze``: left out of every later
    collection, at exit too, where freeing it all cost as much again) and the
    collector runs again for the command's own objects. A program that calls
    ``roost.cli.main`` itself keeps its collector as it is.
    """
    _settle.update(own=True, pending=True)


@contextmanager
def loading() -> Iterator[None]:
    """Imports a command makes when it runs (the store, the engine), made as the start-up's
    are in the console script's process: without the collector, then frozen. Nothing but
    imports goes inside: an object frozen is never collected, nor finalised at exit."""
    if not _settle["own"]:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _settle_now() -> None:
    if _settle["pending"]:
        _settle["pending"] = False
        gc.freeze()
        gc.enable()


class _Commands(MutableMapping[str, "Command"]):
    """The group's commands by name: every name is listed, a command is built when looked up."""

    def __init__(self, group: LazyGroup, built: Mapping[str, Command]) -> None:
        self._group = group
        self._built: dict[str, Command] = dict(built)

    def __getitem__(self, name: str) -> Command:
        if name not in self._built and name in COMMANDS:
            try:
                importlib.import_module(COMMANDS[name][0])  # registers its commands on ``app``
            finally:
                _settle_now()
            self._build_registered()
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS.keys() | self._built.keys())

    def _build_registered(self) -> None:
        for info in app.registered_commands:
            name = _command_name(info)
            if name not in self._built:
                self._built[name] = plain_help(
                    get_command_from_info(
                        info,
                        pretty_exceptions_short=app.pretty_exceptions_short,
                        rich_markup_mode=self._group.rich_markup_mode,
                    )
                )


class LazyGroup(TyperGroup):
    """roost's command group: a command's module is imported when that command is used."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self, self.commands)

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)  # the names alone: listing them builds nothing

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The commands and their first lines, from ``COMMANDS``, importing none of them;
        a long line is wrapped, never cut."""
        rows = [(name, self._short_help(name)) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _short_help(self, name: str) -> str:
        if name in COMMANDS:
            return COMMANDS[name][1]
        return str(self.commands[name].get_short_help_str(_WHOLE))  # one added by other means


def _command_name(info: CommandInfo) -> str:
    """The name a registered command is called by: its own, else its function's, as typer has it."""
    if info.name:
        return info.name
    assert info.callback is not None  # typer registers commands by decorating functions
    return typer.main.get_command_name(info.callback.__name__)


_WHOLE = 10_000  # columns: a command's first line is never cut

# How a value is named in help when its option names none: by its type, else by its name.
_TYPE_WORDS: dict[object, str] = {int: "N", float: "NUMBER"}
_NAME_WORDS = {"db": "URL", "answer": "TEXT", "message": "TEXT"}


def plain_help(command: Command) -> Command:
    """``command`` with help as a person reads it: ``RUN`` and ``--db DB``, not typer's
    ``{RUN}``, ``RUN <str>``, ``--db <str>`` or ``<list[str]>``."""
    from typer.core import TyperArgument, TyperOption

    for param in command.params:
        if isinstance(param, TyperOption) and not (param.is_flag or param.count):
            if param.metavar is None:
                param.metavar = _value_word(param)
        elif isinstance(param, TyperArgument):
            if param.metavar is None:
                param.metavar = (param.name or "value").upper()
            shown = param.metavar
            usage = shown if param.required or shown.startswith("[") else f"[{shown}]"
            usage += "..." if param.nargs != 1 and not shown.endswith("...") else ""
            # Set on the parameter itself: typer's own methods add the braces and the types.
            setattr(param, "_usage_display_name", lambda usage=usage: usage)  # noqa: B010
            setattr(param, "display_type_rich", lambda ctx: None)  # noqa: B010
    return command


def _value_word(param: Any) -> str:
    """The word an option's value is shown as: ``N``, ``a|b`` for choices, else its name."""
    described = getattr(param, "type_descriptor", None)
    if described is not None and described.is_choice and described.choices:
        return "[" + "|".join(str(choice) for choice in described.choices) + "]"
    annotation = getattr(described, "annotation", None)
    name = param.name or "value"
    return _TYPE_WORDS.get(annotation) or _NAME_WORDS.get(name) or name.upper()


def _print_version(value: bool) -> None:
    if value:
        import roost

        typer.echo(f"roost {roost.__version__}")
        raise typer.Exit()


# The run store of the commands that store the runs they make (run, chat, batch, test, ...).
DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Run store URL (default: ROOST_DB or .roost/roost.db)."),
]

app = typer.Typer(
    name="roost",
    cls=LazyGroup,
    help="Run, validate, replay and draw declarative conversation graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print roost's version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Run, validate, replay and draw declarative conversation graphs."""
