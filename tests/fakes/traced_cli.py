"""``roost`` run in this process with the given OTEL_* variables, as the tracing tests run it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.cli import main

if TYPE_CHECKING:
    import pytest


def cli(
    *args: str,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    """``roost ARGS`` in this process, with ``env`` as its OTEL_* variables: exit code, out, err."""
    for name in os.environ:
        if name.startswith(("OTEL_", "ROOST_OTEL")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    try:
        main(list(args))
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
