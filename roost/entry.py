"""The ``roost`` console script: Ctrl-C at any moment, start-up included, is one line."""

from __future__ import annotations

import sys


def main() -> None:
    """Imports the command line (which a person may interrupt) and runs it."""
    try:
        from roost.cli import main as cli_main
    except KeyboardInterrupt:
        print("roost: interrupted", file=sys.stderr)
        sys.exit(130)
    cli_main()
