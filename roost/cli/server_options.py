"""The options ``roost serve`` and ``roost studio`` share, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

Port = Annotated[
    int,
    typer.Option("--port", metavar="PORT", min=0, max=65535, help="The port (0: any free one)."),
]
StoreUrl = Annotated[
    str | None,
    typer.Option(
        "--db", metavar="URL", help="Run store URL (default: ROOST_DB or .roost/roost.db)."
    ),
]
Tokens = Annotated[
    list[str] | None,
    typer.Option(
        "--token",
        metavar="TOKEN",
        help="A bearer token clients must send (or sha256:HEX of one); repeat for more. "
        "Also read from ROOST_TOKENS.",
    ),
]
