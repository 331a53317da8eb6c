"""``roost test [PATH...]``: run the cases of flow test files (``*.test.yaml``).

Exit status: 0 every case passed, 1 some case failed, 2 a test file (or a path)
is not valid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from roost.cli.app import DbOption, app


@app.command(name="test")
def test_command(
    paths: Annotated[
        list[str] | None,
        typer.Argument(metavar="[PATH]...", help="Test files or folders (default: this folder)."),
    ] = None,
    junit_xml: Annotated[
        Path | None,
        typer.Option("--junit-xml", metavar="FILE", help="Also write the results as JUnit XML."),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option("--repeat", metavar="N", min=1, help="Run every case N times."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Run the cases of flow test files (*.test.yaml); exit 1 when one fails.

    Every run of a case is an ordinary stored run: show, replay or fork it.
    """
    from roost.cli.logs import open_store
    from roost.flowtest.report import case_line, full_report, write_junit
    from roost.flowtest.session import run_tests

    console = Console(highlight=False, soft_wrap=True)
    store = open_store(db)
    try:
        outcome = run_tests(
            paths or ["."],
            on_result=lambda result: case_line(console, result),
            store=store,
            repeat=repeat,
        )
    finally:
        store.close()
    full_report(console, outcome)
    if junit_xml is not None:
        write_junit(junit_xml, outcome)
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)
