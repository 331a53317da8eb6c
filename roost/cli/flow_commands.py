"""``roost validate`` and ``roost schema``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from roost.cli.app import app
from roost.errors import FlowError, Problem, RoostError, UsageError
from roost.flow import Flow
from roost.flow.json_schema import flow_schema
from roost.loading import load_flow


class InvalidFlows(RoostError):
    """Some flow files given to ``roost validate`` have errors (already printed)."""

    exit_code = 2


def validate_file(path: str) -> tuple[Flow | None, list[Problem]]:
    """The flow at ``path`` (None if it has errors) and every problem found, warnings included
    (a provider whose key this environment lacks is one: the file is right without it)."""
    from roost.providers.keys import key_warnings

    try:
        flow = load_flow(path)
    except FlowError as error:
        return None, error.problems
    return flow, [*flow.warnings, *key_warnings(flow)]


@app.command()
def validate(
    flows: Annotated[
        list[str] | None, typer.Argument(metavar="FLOW...", help="Flow files to check.")
    ] = None,
) -> None:
    """Check flow files without running them: one line per problem, exit 2 on any error."""
    if not flows:
        raise UsageError("roost validate: give at least one flow file")
    failed = 0
    for path in flows:
        flow, problems = validate_file(path)
        for problem in problems:
            typer.echo(str(problem))
        if flow is None:
            failed += 1
        else:
            typer.echo(f"{path}: ok")
    if failed and len(flows) == 1:
        raise typer.Exit(InvalidFlows.exit_code)  # its problem lines say it all
    if failed:
        noun = "file has" if failed == 1 else "files have"
        raise InvalidFlows(f"roost: {failed} of {len(flows)} flow {noun} errors")


@app.command()
def schema() -> None:
    """Print the JSON Schema of flow files (for editors: roost schema > roost.schema.json)."""
    typer.echo(json.dumps(flow_schema(), indent=2))
