"""roost's command line: parse, call the API, print, exit with the error's code.

Each command lives in a module of its own and registers itself on ``app``;
``main`` catches roost's base error once and prints it as one line.
"""

from __future__ import annotations

import sys

import click

from roost.cli.app import app
from roost.errors import RoostError

# Importing the command modules registers their commands on ``app``.
from roost.cli import (  # noqa: E402,F401  isort: skip
    flow_commands,
    render_command,
    run_commands,
    store_commands,
)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``roost`` console script."""
    try:
        app(args=argv, standalone_mode=False)
    except RoostError as error:
        print(str(error), file=sys.stderr)
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        print("roost: interrupted", file=sys.stderr)
        sys.exit(130)
    except click.ClickException as error:
        # Bad use of the command line: one line, exit 2 as the contract says.
        print(f"roost: error: {error.format_message()}", file=sys.stderr)
        sys.exit(2)
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
