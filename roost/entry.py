"""The ``roost`` console script: Ctrl-C at any moment, start-up included, is one line."""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """Imports the command line (which a person may interrupt) and runs it."""
    gc.disable()  # until the command's module is loaded: see settle_once_loaded
    try:
        from roost.cli import main as cli_main
        from roost.cli.app import settle_once_loaded
    except KeyboardInterrupt:
        print("roost: interrupted", file=sys.stderr)
        sys.exit(130)
    settle_once_loaded()
    cli_main()
