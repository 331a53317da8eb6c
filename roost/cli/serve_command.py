"""``roost serve``: the HTTP API, its streams and the page, on uvicorn.

FastAPI and uvicorn are imported only here, when the command runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from roost.cli.app import app
from roost.cli.server_options import Port, StoreUrl, Tokens


@app.command()
def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            metavar="HOST",
            help="The address to listen on (beyond loopback: needs a token).",
        ),
    ] = "127.0.0.1",
    port: Port = 8000,
    db: StoreUrl = None,
    flows: Annotated[
        Path,
        typer.Option("--flows", metavar="DIR", help="The folder whose flow files clients may run."),
    ] = Path("."),
    token: Tokens = None,
    cors: Annotated[
        list[str] | None,
        typer.Option(
            "--cors", metavar="ORIGIN", help="Let pages from ORIGIN call the API; repeat."
        ),
    ] = None,
    queue_limit: Annotated[
        int,
        typer.Option(
            "--queue-limit", metavar="N", min=1, help="Messages that may wait for one run."
        ),
    ] = 32,
    streams_per_client: Annotated[
        int,
        typer.Option(
            "--streams-per-client",
            metavar="N",
            min=1,
            help="Streams (SSE and WebSocket) one client address may hold open.",
        ),
    ] = 32,
    lease: Annotated[
        float,
        typer.Option(
            "--lease",
            min=0.5,
            help="Seconds a stopped worker's runs wait before another takes them.",
        ),
    ] = 30.0,
    grace: Annotated[
        float,
        typer.Option(
            "--grace",
            metavar="SECONDS",
            min=0,
            help="On SIGTERM or Ctrl-C: how long the steps in flight may take to finish "
            "before they are cancelled (a second signal: at once).",
        ),
    ] = 30.0,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="FILE",
            help="A serve configuration file (YAML) whose schedules start runs on time.",
        ),
    ] = None,
) -> None:
    """Serve flows over HTTP: an API, live streams and a page to run them in a browser."""
    from roost.serve.config import ServeConfig, token_digests
    from roost.serve.server import serve as run_server

    schedules: tuple[Any, ...] = ()
    clock = None
    if config_file is not None:
        from roost.cli.schedules_command import read_serve_file
        from roost.serve.flowdir import FlowDir
        from roost.serve.scheduler import clock_from

        served = read_serve_file(config_file)
        served.check_flows(FlowDir(flows).load)
        schedules = served.schedules
        clock = clock_from(os.environ.get("ROOST_SCHEDULE_NOW"))
    config = ServeConfig(
        flows=flows,
        db=db,
        host=host,
        tokens=token_digests(token or [], os.environ.get("ROOST_TOKENS")),
        cors=tuple(cors or ()),
        queue_limit=queue_limit,
        streams_per_client=streams_per_client,
        lease_seconds=lease,
        schedules=schedules,
        schedule_clock=clock,
    )
    raise typer.Exit(run_server(host, port, config, grace))
