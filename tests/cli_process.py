"""The roost command line in a child process, as a user's shell would run it."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

_MAIN = "import sys; from roost.cli import main; main(sys.argv[1:])"


def run_cli(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``roost ARGS...`` in ``cwd`` with no terminal and no standard input."""
    return subprocess.run(
        [sys.executable, "-c", _MAIN, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
