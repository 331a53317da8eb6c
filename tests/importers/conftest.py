"""The importers' tests: the files they import, ``roost`` run on a store in ``tmp_path``, and
what an import makes of a file. The run page tests of imported runs share the visualize
tests' headless Chromium."""

from __future__ import annotations

import os
from pathlib import Path

from roost.importers import import_run
from tests.cli_inprocess import Ran, run_cli
from tests.visualize.conftest import browser

__all__ = [
    "FIXTURES", "browser", "events_of", "events_of_path", "imported", "messages", "roost",
]  # fmt: skip

FIXTURES = Path(__file__).parent.parent / "fixtures" / "importers"


def roost(tmp_path: Path, *args: str) -> Ran:
    env = {**os.environ, "ROOST_DB": str(tmp_path / "runs.db")}
    return run_cli(*args, cwd=tmp_path, env=env)


def events_of(name: str, fmt: str) -> list[dict]:
    _, events, _ = import_run(FIXTURES / name, fmt, "r")
    return [e.model_dump(by_alias=True, mode="json") for e in events]


def messages(events: list[dict]) -> list[tuple[str, str, str]]:
    return [(e["from"], e["to"], e["content"]) for e in events if e["type"] == "message"]


def imported(tmp_path: Path, name: str, fmt: str) -> str:
    """``roost import`` of the fixture ``name``: the id of the run it stored."""
    done = roost(tmp_path, "import", str(FIXTURES / name), "--from", fmt)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[2]


def events_of_path(path: Path, fmt: str) -> list[dict]:
    _, events, _ = import_run(path, fmt, "r")
    return [e.model_dump(by_alias=True, mode="json") for e in events]
