"""``roost diff RUN_A RUN_B``: where two runs part, and what each did from there, side by side.

For two forks of one run, two runs of one flow, or (``roost diff RUN --flow
FILE``) a run and its replay under FILE. The events are compared as a replay
compares them (without run ids and times); the runs share the events before
the first that differs. From there each run's events are shown in a column of
its own (messages, choices and the routes they took, tool calls, model calls
with their tokens), the first route each took from there named above; then
each run's totals: tokens, cost and model calls. Exit 0 when the runs are the
same, 4 when they differ.
"""

from __future__ import annotations

import asyncio
import json
from itertools import zip_longest
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from roost.cli.app import app
from roost.cli.store_commands import DbOption, ReplayDiverged, console, recorded
from roost.errors import UsageError

if TYPE_CHECKING:
    from roost.events import Event
    from roost.flow.routes import TakenRoute

SHOWN = 160  # characters of a message or a result shown in a cell
MAX_ROWS = 200  # events shown per side after the runs part


@app.command(name="diff")
def diff(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="Run id (or prefix) or file.")],
    run_b: Annotated[
        str | None,
        typer.Argument(metavar="RUN_B", help="The other run (omit it with --flow)."),
    ] = None,
    flow_file: Annotated[
        str | None,
        typer.Option("--flow", help="Compare RUN_A with its replay under this flow file."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Show where two runs part and what each did from there; exit 4 when they differ."""
    left, _, _ = recorded(run_a, db)
    if run_b is not None and flow_file is None:
        right, _, _ = recorded(run_b, db)
        names = (run_a, run_b)
    elif run_b is None and flow_file is not None:
        right = _replayed(left, flow_file)
        names = (run_a, f"replay under {flow_file}")
    else:
        raise UsageError("give RUN_A and RUN_B, or RUN_A and --flow FILE")
    out = console()
    at = parting(left, right)
    if at is None:
        out.print(f"same: {len(left)} events")
        return
    out.print(f"they share {at} event{'s' if at != 1 else ''} (0 to {at - 1})" if at else
              "they share no event")  # fmt: skip
    out.print(f"[bold red]they part at event {at}[/]")
    taken = [routes_by_seq(left), routes_by_seq(right)]
    parted = routes_parted(left[at:], right[at:], taken)
    if parted:
        out.print(escape(parted))
    out.print(side_by_side(left[at:], right[at:], names, taken))
    out.print(totals(left, right, names))
    raise ReplayDiverged(f"the runs part at event {at}")


# What a fork's run_start says of where it came from, not of what happened.
_FORK_FIELDS = ("memory_at",)


def parting(left: list[Event], right: list[Event]) -> int | None:
    """The index of the first event that differs (as a replay compares), None when none does."""
    from roost.engine.replay import comparable

    def seen(event: Event) -> dict[str, object]:
        fields = comparable(event)
        if event.type == "run_start":
            for key in _FORK_FIELDS:
                fields.pop(key, None)
        return fields

    for index, (a, b) in enumerate(zip_longest(left, right)):
        if a is None or b is None or seen(a) != seen(b):
            return index
    return None


def _replayed(events: list[Event], flow_file: str) -> list[Event]:
    from roost.engine.replay import replay_run
    from roost.flow import read_flow

    report = asyncio.run(replay_run(read_flow(flow_file), events))
    return report.events


def routes_by_seq(events: list[Event]) -> dict[int, TakenRoute]:
    """The conditional routes a run took, by the seq of the event that took each."""
    from roost.flow.routes import taken_routes

    return {route.seq: route for route in taken_routes(events)}


def routes_parted(left: list[Event], right: list[Event], taken: list[dict[int, TakenRoute]]) -> str:
    """``routes from there: critic→writer (verdict = revise) | critic→editor (...)``: the
    first route each run took from where they part; '' when neither took one."""
    firsts = []
    for events, routes in zip((left, right), taken, strict=True):
        route = next((routes[e.seq] for e in events if e.seq in routes), None)
        firsts.append(f"{route.name} ({route.when})" if route is not None else "none")
    if firsts == ["none", "none"]:
        return ""
    return f"routes from there: {firsts[0]} | {firsts[1]}"


def side_by_side(
    left: list[Event],
    right: list[Event],
    names: tuple[str, str],
    taken: list[dict[int, TakenRoute]] | None = None,
) -> Table:
    """The events of each run from where they part, a row a pair (``taken``: each run's
    routes by seq, named beside the choice or the end that took them)."""
    routes = taken or [{}, {}]
    table = Table("seq", escape(names[0]), escape(names[1]), show_lines=False)
    for row, (a, b) in enumerate(zip_longest(left[:MAX_ROWS], right[:MAX_ROWS])):
        seq = (a or b).seq if (a or b) is not None else ""
        style = "bold red" if row == 0 else ""
        cells = [
            escape(_described(event, side)) for event, side in zip((a, b), routes, strict=True)
        ]
        table.add_row(str(seq), *cells, style=style)
    if max(len(left), len(right)) > MAX_ROWS:
        table.add_row("…", f"({len(left)} events)", f"({len(right)} events)")
    return table


def _described(event: Event | None, routes: dict[int, TakenRoute]) -> str:
    """``describe(event)``, with the route it took when it took one."""
    route = routes.get(event.seq) if event is not None else None
    shown = describe(event)
    return f"{shown}, route {route.name}: {route.when}" if route is not None else shown


def describe(event: Event | None) -> str:
    """One event as a short line: who said what to whom, which tool, which model."""
    if event is None:
        return "—"
    data = event.model_dump(mode="json", by_alias=True)
    kind = event.type
    if kind in ("message", "error"):
        mark = "error " if kind == "error" else ""
        return f"{mark}{data['from']} → {data['to']}: {_clip(data['content'])}"
    if kind == "interrupt":
        return f"paused: {data['from']} is asked"
    if kind == "resume":
        return f"answered: {_clip(data.get('feedback') or '')!r}"
    if kind == "select":
        return f"{data['channel']} chose {data['chosen']} ({data['by']})"
    if kind == "tool_call":
        return f"{data['agent']} calls {data['name']} {_clip(_json(data['arguments']))}"
    if kind == "tool_result":
        error = " (error)" if data.get("is_error") else ""
        return f"{data['name']}{error} → {_clip(str(data['content']))}"
    if kind == "llm_call":
        usage = data.get("usage") or {}
        tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        purpose = f" [{data['purpose']}]" if data.get("purpose") else ""
        failed = " failed" if data.get("error") else ""
        return f"{data['node']} asks {data['provider']}{purpose}{failed} ({tokens} tokens)"
    if kind == "terminate":
        why = f" ({data['reason']})" if data.get("reason") else ""
        return f"terminated at {data['node']}{why}"
    return kind


def totals(left: list[Event], right: list[Event], names: tuple[str, str]) -> Table:
    """Each run's tokens, cost and model calls."""
    from roost.pricing import run_cost

    table = Table("", escape(names[0]), escape(names[1]))
    sides = [_spent(events) for events in (left, right)]
    table.add_row("tokens", *(str(tokens) for tokens, _ in sides))
    table.add_row("model calls", *(str(calls) for _, calls in sides))
    table.add_row("cost", run_cost(left).text(), run_cost(right).text())
    return table


def _spent(events: list[Event]) -> tuple[int, int]:
    from roost.events import LlmCallEvent

    calls = [e for e in events if isinstance(e, LlmCallEvent)]
    tokens = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in calls if c.usage)
    return tokens, len(calls)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
