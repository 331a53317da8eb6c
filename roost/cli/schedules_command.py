"""``roost schedules list``: the schedules of a serve configuration and when each fires next."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roost.cli.app import app
from roost.errors import UsageError

if TYPE_CHECKING:
    from roost.serve.servefile import ServeFile


class Action(StrEnum):
    list = "list"


@app.command()
def schedules(
    action: Annotated[Action, typer.Argument(help="What to do: list.")],
    config_file: Annotated[
        Path,
        typer.Option("--config", metavar="FILE", help="The serve configuration file (YAML)."),
    ] = Path("serve.yaml"),
    count: Annotated[
        int, typer.Option("--next", metavar="N", min=1, max=100, help="Fire times shown each.")
    ] = 3,
) -> None:
    """List the schedules of a serve configuration and the next times each fires."""
    served = read_serve_file(config_file)
    from roost.serve.scheduler import clock_from  # croniter is there: the file was read

    now = clock_from(os.environ.get("ROOST_SCHEDULE_NOW"))()
    if not served.schedules:
        typer.echo(f"{config_file}: no schedules")
        return
    rows = [("SCHEDULE", "CRON", "TIME ZONE", "FLOW", "NEXT")]
    for schedule in served.schedules:
        ticks = schedule.ticks_after(now)
        upcoming = ", ".join(next(ticks).isoformat() for _ in range(count))
        rows.append((schedule.name, schedule.cron, schedule.timezone, schedule.flow, upcoming))
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        typer.echo("  ".join([*cells, row[4]]))


def read_serve_file(path: Path) -> ServeFile:
    """The serve configuration at ``path``; one line saying what to install without croniter
    (it comes with roost: missing, the install is broken)."""
    try:
        from roost.serve.servefile import load_serve_file
    except ModuleNotFoundError as error:
        if error.name != "croniter":
            raise
        raise UsageError(
            f"{path}: schedules need the cron library croniter, which roost installs with it: "
            "pip install croniter"
        ) from None
    return load_serve_file(path)
