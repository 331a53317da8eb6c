"""``roost compare FLOW_A FLOW_B INPUTS``: each row of INPUTS under both flows, and what changed.

Each side runs as ``roost batch`` does (a stored run a row, a progress bar,
finished runs reused when the command runs again); then the rows whose answers
differ are shown in a table, with the judge's preference and reason when
``--judge PROVIDER --rubric TEXT`` are given, and the totals: answers changed,
preferred A/B/tie, and each side's tokens, cost and model calls. ``--out FILE``
writes a line a row as JSON Lines. Exit 0 when it compared, 3 when some row
of either side stopped at an error, 2 for invalid use.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from roost.cli.app import DbOption, app
from roost.errors import UsageError

if TYPE_CHECKING:
    from roost.batch.session import Outcome
    from roost.flow.models import Flow
    from roost.flowtest.compare import Pair, Totals
    from roost.store.sql import SqlStore

SHOWN = 80  # characters of an answer shown in the table


@app.command(name="compare")
def compare(
    flow_a: Annotated[Path, typer.Argument(metavar="FLOW_A", help="The first flow file.")],
    flow_b: Annotated[Path, typer.Argument(metavar="FLOW_B", help="The second flow file.")],
    inputs: Annotated[Path, typer.Argument(metavar="INPUTS", help="JSON Lines or CSV rows.")],
    judge: Annotated[
        str | None,
        typer.Option("--judge", metavar="PROVIDER", help="A provider of FLOW_A (or FLOW_B)."),
    ] = None,
    rubric: Annotated[
        str | None, typer.Option("--rubric", metavar="TEXT", help="What the judge prefers.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Write a line a row (JSON Lines).")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1)] = 4,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the order answers are shown in.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Run every row of INPUTS under two flows and show where their answers differ."""
    from roost.batch.inputs import input_format
    from roost.cli.logs import open_store
    from roost.loading import load_flow

    if (judge is None) != (rubric is None):
        raise UsageError("give --judge PROVIDER and --rubric TEXT together")
    input_format(inputs)
    flows = (load_flow(flow_a), load_flow(flow_b))
    judged = _judge_flow(flows, judge) if judge is not None else None
    store = open_store(db)
    err = Console(stderr=True, highlight=False)
    try:
        sides = [
            _side(flow, path, inputs, store, err, concurrency)
            for flow, path in zip(flows, (flow_a, flow_b), strict=True)
        ]
        pairs = _pairs(sides, store)
        if judged is not None and judge is not None and rubric is not None:
            pairs = asyncio.run(_judged(pairs, judged, judge, rubric, seed))
    finally:
        store.close()
    _report(pairs, (str(flow_a), str(flow_b)))
    if out is not None:
        _write(out, pairs)
    if any(outcome.exit_code for outcome in sides):
        raise typer.Exit(3)


def _judge_flow(flows: tuple[Flow, Flow], name: str) -> Flow:
    for flow in flows:
        if name in flow.providers:
            return flow
    raise UsageError(f"--judge {name}: neither flow has a provider {name!r}")


def _side(
    flow: Flow, path: Path, inputs: Path, store: SqlStore, err: Console, concurrency: int
) -> Outcome:
    """The flow's batch over the inputs: its rows run, or reused when they finished before."""
    from roost.batch.plan import default_batch_id
    from roost.batch.session import locally, run_batch

    batch = default_batch_id(inputs, path)
    with tempfile.TemporaryDirectory(prefix="roost-compare-") as folder:
        results = Path(folder) / "results.jsonl"
        return run_batch(flow, inputs, batch, store, results, err, locally(store, concurrency))


def _pairs(sides: list[Outcome], store: SqlStore) -> list[Pair]:
    from roost.flowtest.compare import Pair, side_of

    a, b = sides
    items = a.plan.items
    pairs = []
    for index, (one, other) in enumerate(zip(a.ordered, b.ordered, strict=True)):
        message = getattr(items[index].row, "message", None) if index < len(items) else None
        pairs.append(Pair(one.row, message, side_of(one, store), side_of(other, store)))
    return pairs


async def _judged(
    pairs: list[Pair], flow: Flow, name: str, rubric: str, seed: int | None
) -> list[Pair]:
    """Each pair whose answers differ, with the judge's preference."""
    from dataclasses import replace

    from roost.engine.defaults import default_provider
    from roost.flowtest.compare import preference
    from roost.runstate import fold

    provider = default_provider(flow, fold([]), name)
    chooser = random.Random(seed)
    judged = []
    for pair in pairs:
        if pair.differs:
            said = await preference(
                provider, rubric, pair.message, pair.a.final or "", pair.b.final or "", chooser
            )
            pair = replace(pair, preference=said)
        judged.append(pair)
    return judged


def _report(pairs: list[Pair], names: tuple[str, str]) -> None:
    from roost.flowtest.compare import Totals

    console = Console(highlight=False, soft_wrap=True)
    changed = [pair for pair in pairs if pair.differs]
    if changed:
        table = Table("row", escape(names[0]), escape(names[1]), "judge")
        for pair in changed:
            judged = pair.preference
            verdict = "" if judged is None else f"{judged.prefer}: {judged.reason}"
            table.add_row(
                str(pair.row),
                escape(_clip(pair.a.final)),
                escape(_clip(pair.b.final)),
                escape(verdict),
            )
        console.print(table)
    _totals(console, Totals.of(pairs), names)


def _totals(console: Console, totals: Totals, names: tuple[str, str]) -> None:
    console.print(f"{totals.changed} of {totals.rows} answers changed")
    if any(totals.preferred.values()):
        p = totals.preferred
        console.print(f"preferred: A {p['a']}, B {p['b']}, tie {p['tie']}")
    table = Table("", "A " + escape(names[0]), "B " + escape(names[1]))
    table.add_row("tokens", *(str(t) for t in totals.tokens))
    table.add_row("cost", *(f"${c:.6f}" for c in totals.cost))
    table.add_row("model calls", *(str(c) for c in totals.model_calls))
    console.print(table)


def _write(out: Path, pairs: list[Pair]) -> None:
    try:
        with out.open("w", encoding="utf-8") as file:
            for pair in pairs:
                file.write(json.dumps(pair.as_dict(), ensure_ascii=False) + "\n")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write it: {exc.strerror or exc}") from exc


def _clip(text: str | None) -> str:
    if text is None:
        return "(no answer)"
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
