"""``roost studio``: ``roost serve --flows DIR`` whose API also edits the folder's flow files."""

from __future__ import annotations

import os
import sys
import threading
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from roost.cli.app import app


@app.command()
def studio(
    folder: Annotated[
        Path, typer.Argument(metavar="[DIR]", help="The folder of flow files (default: here).")
    ] = Path("."),
    host: Annotated[
        str,
        typer.Option(
            "--host", metavar="HOST", help="The address to listen on (beyond loopback: a token)."
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port", metavar="PORT", min=0, max=65535, help="The port (0: any free one)."
        ),
    ] = 8000,
    token: Annotated[
        list[str] | None,
        typer.Option(
            "--token",
            metavar="TOKEN",
            help="A bearer token clients must send (or sha256:HEX of one); repeat for more. "
            "Also read from ROOST_TOKENS.",
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", metavar="URL", help="Run store URL (default: ROOST_DB or .roost/roost.db)."
        ),
    ] = None,
) -> None:
    """Edit, run and watch the flows of DIR in a browser; edits are written into their YAML."""
    from roost.serve.config import ServeConfig, token_digests
    from roost.serve.server import serve as run_server

    config = ServeConfig(
        flows=folder,
        db=db,
        host=host,
        tokens=token_digests(token or [], os.environ.get("ROOST_TOKENS")),
        studio=True,
    )
    if sys.stdout.isatty() and port:  # a person at a terminal: the page opens for them
        shown = f"[{host}]" if ":" in host else host
        threading.Timer(1.0, webbrowser.open, [f"http://{shown}:{port}/"]).start()
    raise typer.Exit(run_server(host, port, config))
