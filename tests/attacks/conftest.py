"""The command line as the attacks call it: in this process, in a fresh folder."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from roost.cli import main

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True)
class Said:
    """What one ``roost`` command did: its exit status and what it printed."""

    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        """The lines of standard error, after checking that none is a traceback."""
        assert "Traceback" not in self.err + self.out, self.err
        return self.err.strip().splitlines()

    @property
    def line(self) -> str:
        """The one line of standard error (the test fails when there are more)."""
        assert len(self.lines) == 1, self.err
        return self.lines[0]


Cli = Callable[..., Said]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``roost ARGS...`` in ``tmp_path``, with no terminal, no input and no ``ROOST_DB``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")

    def invoke(*args: str) -> Said:
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = 0
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Said(code, captured.out, captured.err)

    return invoke
