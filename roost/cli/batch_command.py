"""``roost batch FLOW INPUTS``: a run of FLOW for every row of INPUTS, each an ordinary stored run.

Exit status: 0 every row finished (terminated or paused), 3 some row stopped at
an error or could not run (or was not run: SIGTERM drains the batch), 2 invalid
use (the flow, the inputs file, an option), 130 interrupted.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand

from roost.batch.drain import GRACE_SECONDS
from roost.cli.app import DbOption, app

if TYPE_CHECKING:  # typer's own copy of click, whose types its command's methods take
    from typer._click import Context

    from roost.batch.rows import RowResult
    from roost.batch.session import Runs
    from roost.flow.models import Flow
    from roost.store.sql import SqlStore

SHOWN_FAILURES = 20  # failed rows listed in the summary; the results file has them all
RAY_HERE = "local"  # a bare --ray: a Ray started on this machine (ray_tasks.LOCAL)
_FILE_SUFFIXES = (".yaml", ".yml", ".jsonl", ".ndjson", ".csv")


class _BatchCommand(TyperCommand):
    """``roost batch``, whose ``--ray`` takes an address or none (a Ray of this machine)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, with_ray_address(args))


def with_ray_address(args: list[str]) -> list[str]:
    """``args`` with ``local`` after a ``--ray`` that is given no address.

    A ``--ray`` has no address when it ends the command, or when an option or one
    of the command's files (FLOW, INPUTS) comes next.
    """
    given: list[str] = []
    for at, arg in enumerate(args):
        if arg == "--":
            return given + args[at:]
        given.append(arg)
        after = args[at + 1] if at + 1 < len(args) else None
        if arg == "--ray" and (
            after is None or after.startswith("-") or after.lower().endswith(_FILE_SUFFIXES)
        ):
            given.append(RAY_HERE)
    return given


FlowArgument = Annotated[str, typer.Argument(metavar="FLOW", help="The flow file to run.")]
InputsArgument = Annotated[
    Path,
    typer.Argument(
        metavar="INPUTS",
        help='JSON Lines ({"message": ..., "vars": {...}} a line) or CSV (a message column).',
    ),
]
ConcurrencyOption = Annotated[
    int, typer.Option("--concurrency", min=1, help="Rows run at a time (default 8).")
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        metavar="FILE",
        help="Results file (.jsonl or .csv; default: INPUTS' name + .results.jsonl).",
    ),
]
BatchIdOption = Annotated[
    str | None,
    typer.Option(
        "--batch", metavar="ID", help="The batch's id (default: made from INPUTS and FLOW)."
    ),
]
GraceOption = Annotated[
    float,
    typer.Option(
        "--grace",
        metavar="SECONDS",
        min=0,
        help="On SIGTERM, how long the rows running may take to finish; no new row "
        "starts (default 30).",
    ),
]
BudgetOption = Annotated[
    float | None,
    typer.Option(
        "--budget",
        metavar="COST",
        help="US dollars: no new row starts once the rows run have spent it together "
        "(those running finish; the rest run next time).",
    ),
]
RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="[ADDRESS]",
        help="Run the rows as tasks of the Ray cluster at ADDRESS (HOST:PORT, or auto); "
        "without one, of a Ray started on this machine. Needs: pip install 'roost[ray]'.",
    ),
]


@app.command(cls=_BatchCommand)
def batch(
    flow_path: FlowArgument,
    inputs: InputsArgument,
    concurrency: ConcurrencyOption = 8,
    out: OutOption = None,
    batch_id: BatchIdOption = None,
    db: DbOption = None,
    grace: GraceOption = GRACE_SECONDS,
    budget: BudgetOption = None,
    ray: RayOption = None,
) -> None:
    """Run FLOW once for each row of INPUTS (JSON Lines or CSV); run again to finish the rest."""
    from roost.batch.plan import check_batch_id, default_batch_id
    from roost.batch.results import check_out, default_out
    from roost.batch.session import run_batch

    flow = _runnable_flow(flow_path, inputs, budget, ray)
    out = out or default_out(inputs)
    check_out(out, inputs)
    batch = check_batch_id(batch_id) if batch_id else default_batch_id(inputs, Path(flow_path))
    store, runs = _row_runner(ray, db, concurrency, budget)
    console = Console(stderr=True, highlight=False)
    outcome = run_batch(flow, inputs, batch, store, out, console, runs, grace)
    _summary(outcome, out, db, inputs)
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)


def _runnable_flow(flow_path: str, inputs: Path, budget: float | None, ray: str | None) -> Flow:
    """The flow, refused (as is the inputs file) before anything is stored when no row could
    run."""
    from roost.batch.inputs import input_format
    from roost.engine.interpreter import start_route
    from roost.errors import UsageError
    from roost.loading import load_flow
    from roost.providers.keys import refuse_keyless

    input_format(inputs)  # a file that is not .jsonl or .csv is refused before anything else
    flow = load_flow(flow_path)
    start_route(flow, "", None, None)  # a flow without a start route is refused at once
    refuse_keyless(flow)  # every row would stop at its first model call
    if budget is not None:
        from roost.flow.budget_checks import check_budget

        check_budget(flow, budget)
        if ray is not None:
            raise UsageError("--budget counts the rows run in this process: leave out --ray")
    return flow


def _row_runner(
    ray: str | None, db: str | None, concurrency: int, budget: float | None
) -> tuple[SqlStore, Runs]:
    """The store and what runs the rows: this process, or the tasks of a Ray cluster."""
    from roost.batch.session import locally
    from roost.cli.logs import open_store

    if ray is None:
        store = open_store(db)
        return store, locally(store, concurrency, budget)
    # Ray, the store and the cluster are checked before anything is stored
    from roost.batch.ray_tasks import on_ray

    runs = on_ray(ray, db, concurrency)
    return open_store(db), runs


def _what_next(console: Console, failed: list[RowResult], inputs: Path) -> None:
    """How to finish the rows that did not: an invalid row is fixed, the others retried."""
    invalid = sum(1 for result in failed if result.status == "invalid")
    if invalid:
        rows = "the invalid row" if invalid == 1 else f"the {invalid:,} invalid rows"
        console.print(
            f"fix {rows} in {escape(str(inputs))} (a row run again as it is fails the same "
            "way), then run the same command again"
        )
    # Rows left unstarted by a drain or a spent --budget: each result's error says which.
    left = sum(1 for result in failed if result.status == "skipped")
    if left:
        rows = "1 row was" if left == 1 else f"{left:,} rows were"
        console.print(f"{rows} not run; run the same command again to run them")
    if invalid + left < len(failed):
        console.print(
            "run the same command again to retry the rows that stopped (the finished rows are kept)"
        )


def _summary(outcome: object, out: Path, db: str | None, inputs: Path) -> None:
    from roost.batch.session import Outcome

    assert isinstance(outcome, Outcome)
    console = Console(highlight=False, soft_wrap=True)
    results = outcome.ordered
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    shown = ", ".join(f"{count:,} {status}" for status, count in sorted(counts.items()))
    tokens = sum(result.tokens for result in results)
    costs = [result.cost for result in results if result.cost is not None]
    cost = f"${sum(costs):,.4f}" if costs else "n/a"
    batch = outcome.plan.batch
    console.print(
        f"batch {batch}: {len(results):,} rows ({shown}); ran {outcome.ran:,} now; "
        f"{tokens:,} tokens; cost {cost}"
    )
    console.print(f"results: {escape(str(out))}")
    failed = outcome.failed
    if failed:
        rows = "1 row" if len(failed) == 1 else f"{len(failed):,} rows"
        console.print(f"[red]{rows} did not finish:[/]")
        for result in failed[:SHOWN_FAILURES]:
            console.print("  " + escape(result.error or f"line {result.row}: {result.status}"))
        if len(failed) > SHOWN_FAILURES:
            console.print(f"  ... and {len(failed) - SHOWN_FAILURES:,} more (see the results file)")
    if outcome.interrupted:
        sys.stderr.write("roost: interrupted; run the same command again to go on\n")
    elif outcome.drained:
        sys.stderr.write("roost: stopped (SIGTERM); run the same command again to run the rest\n")
    elif failed:
        _what_next(console, failed, inputs)
    command = ["roost", "runs", "--batch", batch]
    if db:
        from roost.store.sql import masked_db

        command += ["--db", masked_db(db)]  # a password is never printed
    console.print(f"[dim]its runs: {escape(shlex.join(command))}[/]")
