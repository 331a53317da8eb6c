"""A run kept in the store and in an --events file stays whole in both when continued by file."""

from __future__ import annotations

import shutil
from pathlib import Path

from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore
from tests.cli_inprocess import Ran, run_cli

FLOWS = Path(__file__).resolve().parent.parent / "flows"


def _roost(cwd: Path, *args: str) -> Ran:
    return run_cli(*args, cwd=cwd)


def test_continuing_through_the_file_also_advances_the_stored_run(tmp_path: Path) -> None:
    shutil.copy(FLOWS / "math-chat.yaml", tmp_path / "math-chat.yaml")
    started = _roost(tmp_path, "run", "math-chat.yaml", "--no-input", "--events", "m.jsonl")
    assert started.returncode == 0, started.stderr
    continued = _roost(tmp_path, "continue", "m.jsonl", "--answer", "Great, thanks", "--no-input")
    assert continued.returncode == 0, continued.stderr

    file_events = JsonlLog(tmp_path / "m.jsonl").load()
    store = SqlStore(f"sqlite:///{tmp_path / '.roost' / 'roost.db'}", create=False)
    stored_events = store.log(file_events[0].run).load()
    assert file_events[-1].type == "terminate"
    assert [e.model_dump() for e in stored_events] == [e.model_dump() for e in file_events]
