"""The console script turns every misuse into one line and exit status 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_inprocess import Ran, run_cli

REPO = Path(__file__).resolve().parent.parent


def _roost(*args: str) -> Ran:
    return run_cli(*args, cwd=REPO)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["frob"], "No such command 'frob'"),
        (["run"], "Missing argument 'FLOW'"),
        (["run", "flows/hello.yaml", "--bogus"], "No such option: --bogus"),
    ],
)
def test_misuse_is_one_line_and_exit_2(args: list[str], words: str) -> None:
    result = _roost(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("roost: error: ")
    assert words in lines[0]


def test_no_command_prints_help_and_exits_2() -> None:
    result = _roost()
    assert result.returncode == 2
    assert "Usage: roost" in result.stderr
    assert "validate" in result.stderr
