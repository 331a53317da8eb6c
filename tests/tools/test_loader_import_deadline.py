"""A tool module that never finishes importing fails validation in one line, not a hang."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.cli import main
from roost.tools import loader

if TYPE_CHECKING:
    from pathlib import Path

# Waits for ever while imported, as a module that opens a connection or a prompt might.
STUCK_PY = """\
import threading

threading.Event().wait()


def lookup(word: str) -> str:
    return word
"""

FLOW = """\
roost: 1
name: stuck
defaults: {provider: mock}
providers:
  mock: {kind: scripted}
tools:
  lookup:
    python: "stuck_at_import:lookup"
agents:
  USER: {interrupt: ALWAYS}
  a: {role: r, functions: [lookup]}
"""


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(path)])
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_an_import_past_its_deadline_is_one_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "IMPORT_DEADLINE", 0.5)
    (tmp_path / "stuck_at_import.py").write_text(STUCK_PY)
    path = tmp_path / "stuck.yaml"
    path.write_text(FLOW)
    code, out, _ = validate(path, capsys)
    assert code == 2
    assert out == (
        f"{path}:8:5: error: tool 'lookup': importing 'stuck_at_import' did not finish "
        "within 0.5 s (does the module wait or loop when it is imported?)\n"
    )
    # Asked again while the first import is still stuck: the same line, and standard
    # output is roost's again (the import left behind does not keep it redirected).
    code, again, _ = validate(path, capsys)
    assert (code, again) == (2, out)
    print("roost's own output")
    assert capsys.readouterr().out == "roost's own output\n"
