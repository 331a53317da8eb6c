"""``roost serve``: the HTTP API, its streams and the page, on uvicorn.

FastAPI and uvicorn are imported only here, when the command runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roost.batch.drain import GRACE_SECONDS
from roost.cli.app import app
from roost.cli.server_options import Port, StoreUrl, Tokens

if TYPE_CHECKING:
    from roost.serve.scheduler import Clock
    from roost.serve.servefile import Schedule

Host = Annotated[
    str,
    typer.Option(
        "--host",
        metavar="HOST",
        help="The address to listen on (beyond loopback: needs a token).",
    ),
]
FlowsDir = Annotated[
    Path,
    typer.Option("--flows", metavar="DIR", help="The folder whose flow files clients may run."),
]
CorsOrigins = Annotated[
    list[str] | None,
    typer.Option("--cors", metavar="ORIGIN", help="Let pages from ORIGIN call the API; repeat."),
]
QueueLimit = Annotated[
    int,
    typer.Option("--queue-limit", metavar="N", min=1, help="Messages that may wait for one run."),
]
StreamsPerClient = Annotated[
    int,
    typer.Option(
        "--streams-per-client",
        metavar="N",
        min=1,
        help="Streams (SSE and WebSocket) one client address may hold open.",
    ),
]
Lease = Annotated[
    float,
    typer.Option(
        "--lease",
        min=0.5,
        help="Seconds a stopped worker's runs wait before another takes them.",
    ),
]
Grace = Annotated[
    float,
    typer.Option(
        "--grace",
        metavar="SECONDS",
        min=0,
        help="On SIGTERM or Ctrl-C: how long the steps in flight may take to finish "
        "before they are cancelled (a second signal: at once).",
    ),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="A serve configuration file (YAML) whose schedules start runs on time.",
    ),
]


@app.command()
def serve(
    host: Host = "127.0.0.1",
    port: Port = 8000,
    db: StoreUrl = None,
    flows: FlowsDir = Path("."),
    token: Tokens = None,
    cors: CorsOrigins = None,
    queue_limit: QueueLimit = 32,
    streams_per_client: StreamsPerClient = 32,
    lease: Lease = 30.0,
    grace: Grace = GRACE_SECONDS,
    config_file: ConfigFile = None,
) -> None:
    """Serve flows over HTTP: an API, live streams and a page to run them in a browser."""
    from roost.serve.config import ServeConfig, token_digests
    from roost.serve.server import serve as run_server

    schedules, clock = _schedules(config_file, flows)
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


def _schedules(config_file: Path | None, flows: Path) -> tuple[tuple[Schedule, ...], Clock | None]:
    """The schedules of the --config file (their flows checked now) and the clock they
    fire by; none without a file."""
    if config_file is None:
        return (), None
    from roost.cli.schedules_command import read_serve_file
    from roost.serve.flowdir import FlowDir
    from roost.serve.scheduler import clock_from

    served = read_serve_file(config_file)
    served.check_flows(FlowDir(flows).load)
    return served.schedules, clock_from(os.environ.get("ROOST_SCHEDULE_NOW"))
