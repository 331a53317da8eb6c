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
from roost.cli.server_options import Port, StoreUrl, Tokens


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
    port: Port = 8000,
    token: Tokens = None,
    db: StoreUrl = None,
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
