"""A tool module that calls sys.exit while importing."""

import sys

sys.exit(3)


def f() -> str:
    """Never reached."""
    return "never"
