"""The typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="roost",
    help="Run, validate, replay and draw declarative conversation graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
