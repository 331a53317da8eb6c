"""``roost render FLOW [--run RUN] -o OUT``: draw a flow, or a run over it.

The format comes from OUT's suffix (.dot, .svg, .png, .pdf or .html); any
other suffix is a usage error (exit 2) before anything is loaded.
"""

from __future__ import annotations

from pathlib import Path

import typer

from roost.cli.app import app
from roost.events import Event
from roost.flow import read_flow
from roost.ports import ImageStore
from roost.visualize.output import output_format, write_render


@app.command("render")
def render(
    flow_file: str = typer.Argument(..., metavar="FLOW", help="The flow file to draw."),
    out: Path = typer.Option(
        ...,
        "-o",
        "--output",
        metavar="OUT",
        help="The file to write (.dot .svg .png .pdf .html).",
    ),
    run: str | None = typer.Option(
        None,
        "--run",
        metavar="RUN",
        help="A run id or event file to draw over the flow.",
    ),
    db: str | None = typer.Option(
        None, "--db", metavar="URL", help="The run store (default: ROOST_DB or .roost/roost.db)."
    ),
) -> None:
    """Draw FLOW as a graph; with --run, overlay what the run did (counts, tokens, final state)."""
    output_format(out)  # a wrong suffix fails before any loading
    flow = read_flow(flow_file)
    events: list[Event] | None = None
    images: ImageStore | None = None
    if run is not None:
        events, images = _load_run(run, db)
    written = write_render(flow, events, out, images)
    typer.echo(f"wrote {written}")


def _load_run(ref: str, db: str | None) -> tuple[list[Event], ImageStore]:
    """The run's events and where its images are kept (the run page shows them)."""
    # Imported here so that drawing a bare flow never opens the run store's modules.
    from roost.cli.logs import open_log
    from roost.store.images import images_of

    # Only the events: the run's own flow is not needed to draw it over FLOW.
    log = open_log(ref, db=db)
    return log.load(), images_of(log)
