"""``roost memory list|search|add|forget``: the knowledge entries kept in the run store.

A scope is written as runs record it: ``flow:FLOW``, ``agent:FLOW/AGENT`` or
``shared:NAME`` (what ``memory: {scope: NAME}`` gives).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Literal

import typer
from rich.console import Console

from roost.cli.app import app
from roost.cli.lines import print_columns
from roost.cli.logs import open_store
from roost.errors import RunNotFoundError, UsageError
from roost.events import MemoryEntry
from roost.store.memory import SqlMemory

Action = Literal["list", "search", "add", "forget"]
USAGE = "list [FLOW], search QUERY, add KEY CONTENT, forget KEY"
HEADER = ("SCOPE", "KEY", "IMPORTANCE", "CONTENT")


@app.command()
def memory(
    action: Annotated[
        Action, typer.Argument(help="list [FLOW], search QUERY, add KEY CONTENT, forget KEY")
    ],
    words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ARGS", show_default=False, help="The action's QUERY, KEY or CONTENT."
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", help="flow:FLOW, agent:FLOW/AGENT or shared:NAME."),
    ] = None,
    importance: Annotated[
        float, typer.Option("--importance", min=0, max=1, help="For add: 0 to 1.")
    ] = 0.5,
    limit: Annotated[int, typer.Option("--limit", min=1, help="For search.")] = 10,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", help="Run store URL (default: ROOST_DB or the nearest .roost/roost.db)."
        ),
    ] = None,
) -> None:
    """List, search, add or forget the entries of the memory flows keep across runs."""
    args = words or []
    out = Console(highlight=False, soft_wrap=True)
    if scope is not None:
        _check_scope(scope)
    if action == "list":
        _list(out, db, scope, args)
        return
    if scope is None:
        raise UsageError(f"roost memory {action} needs --scope (flow:FLOW, shared:NAME, ...)")
    if action == "search":
        _expect(action, args, 1)
        found_here = _bank(db, create=False).recall(scope, args[0], limit)
        print_columns(out, HEADER, [_row(scope, e) for e in found_here])
    elif action == "add":
        _add(out, db, scope, args, importance)
    elif not _bank(db, create=False).forget(scope, _expect(action, args, 1)[0], ""):
        raise UsageError(f"{scope} has no entry {args[0]!r}")
    else:
        out.print(f"forgot {args[0]!r} in {scope}")


def _list(out: Console, db: str | None, scope: str | None, args: list[str]) -> None:
    """``roost memory list [FLOW]``: every entry, or those of ``scope`` or of FLOW's scopes."""
    if len(args) > 1:
        _expect("list", args, 0)
    bank = _bank(db, create=False)
    found = bank.every_entry() if scope is None else [(scope, e) for e in bank.entries(scope)]
    if args:  # list FLOW: the entries of the scopes that flow reads and writes
        kept = _flow_scopes(args[0])
        found = [(s, e) for s, e in found if kept(s)]
    print_columns(out, HEADER, [_row(s, e) for s, e in found])


def _add(out: Console, db: str | None, scope: str, args: list[str], importance: float) -> None:
    """``roost memory add KEY CONTENT``: an entry stored by hand, in memory#store's limits."""
    _expect("add", args, 2)
    _check_sizes(args[0], args[1])
    entry = MemoryEntry(key=args[0], content=args[1], importance=importance)
    _bank(db, create=True).store(scope, entry, "roost memory add")
    out.print(f"stored {entry.key!r} in {scope}")


def _expect(action: str, args: list[str], count: int) -> list[str]:
    if len(args) != count:
        usage = {"list": "list [FLOW]", "search": "search QUERY", "add": "add KEY CONTENT"}
        shown = usage.get(action, "forget KEY")
        raise UsageError(f"usage: roost memory {shown} (got {len(args)} arguments)")
    return args


# How runs write a scope: flow:FLOW, agent:FLOW/AGENT or shared:NAME.
_SCOPE = re.compile(r"(flow:[^/\s]+|agent:[^/\s]+/\S+|shared:\S+)")


def _check_scope(scope: str) -> None:
    """A --scope that no run could have written is said, rather than matching nothing."""
    if not _SCOPE.fullmatch(scope):
        raise UsageError(
            f"--scope {scope!r} is not a scope: write flow:FLOW, agent:FLOW/AGENT or "
            "shared:NAME (roost memory list shows the scopes there are)"
        )


def _flow_scopes(ref: str) -> Callable[[str], bool]:
    """Which scopes belong to the flow ``ref`` (its file, or its name): its own
    ``flow:``/``agent:`` scopes and, for a file, the shared scope it names."""
    from pathlib import Path

    name, shared = ref, set()
    if Path(ref).is_file():
        from roost.loading import load_flow

        flow = load_flow(ref)
        name = flow.name
        shared = {flow.memory_scope(agent) for agent in flow.agents} - {None}

    def kept(scope: str) -> bool:
        return scope == f"flow:{name}" or scope.startswith(f"agent:{name}/") or scope in shared

    return kept


def _check_sizes(key: str, content: str) -> None:
    """The limits a model's memory#store has, for entries added by hand too."""
    from roost.tools.memory_tool import MAX_CONTENT, MAX_KEY

    if not 1 <= len(key) <= MAX_KEY:
        raise UsageError(f"a memory key has 1 to {MAX_KEY} characters, not {len(key)}")
    if not 1 <= len(content) <= MAX_CONTENT:
        raise UsageError(f"a memory entry has 1 to {MAX_CONTENT} characters, not {len(content)}")
    if "\x00" in key + content:
        raise UsageError("a memory key or entry cannot hold a NUL character")


def _bank(db: str | None, *, create: bool) -> SqlMemory:
    try:
        return SqlMemory(open_store(db, create=create))
    except RunNotFoundError:
        raise UsageError("no run store here yet: nothing is remembered") from None


def _row(scope: str, entry: MemoryEntry) -> tuple[str, str, str, str]:
    return (scope, entry.key, f"{entry.importance:g}", entry.content)
