"""`roost fork` of a run's JSON Lines file, through the command line.

The fork is written to a new file beside the parent: the parent's first SEQ
events re-stamped with the fork's run id, then the fork's own steps. The file
is then a run like any other for `continue`, `show` and `replay`.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli_inprocess import Ran, run_cli

ASK = """\
roost: 1
name: ask
defaults: {provider: mock, max_rounds: 8}
providers:
  mock:
    kind: scripted
    replies: ["draft", "INTERRUPT", "second draft", "INTERRUPT", "final", "INTERRUPT", "done"]
agents:
  writer: {role: You write.}
  critic: {role: You criticise.}
start: {from: critic, to: writer, content: Write a poem}
"""
# The parent, as `roost show ask.jsonl` numbers it:
#    6 ⏸ critic waits for writer       (shared by a fork --at 7)
#    7 ↪ writer answered: shorter
#   13 ⏸ writer waits for critic       (the last event: the run is paused)
AT_FIRST_INTERRUPT = "7"


def roost(cwd: Path, *args: str) -> Ran:
    return run_cli(*args, cwd=cwd, env=_env())


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "ROOST_DB"}
    return {**env, "COLUMNS": "200"}


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def fork_file(result: Ran, folder: Path) -> tuple[str, Path]:
    """The fork's run id and file, from the line `roost fork` starts with."""
    first = result.stdout.splitlines()[0]
    assert ", written to " in first, result.stdout + result.stderr
    name = first.split(", written to ")[1].removesuffix(" and the store")
    return first.split()[1].rstrip(":"), folder / name


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ask.jsonl: a run paused at its second interrupt, also stored in run.db."""
    folder = tmp_path_factory.mktemp("parent")
    (folder / "ask.yaml").write_text(ASK)
    started = roost(
        folder, "run", "ask.yaml", "--events", "ask.jsonl", "--db", "run.db",
        "--answer", "shorter", "--no-input",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    assert len(events_of(folder / "ask.jsonl")) == 14
    return folder


@pytest.fixture
def folder(template: Path, tmp_path: Path) -> Path:
    """A copy of the template folder for one test to fork in."""
    return Path(shutil.copytree(template, tmp_path / "work"))


def test_a_file_forks_at_an_interrupt_with_a_new_message(folder: Path) -> None:
    parent = (folder / "ask.jsonl").read_bytes()
    forked = roost(
        folder, "fork", "ask.jsonl", "--at", AT_FIRST_INTERRUPT, "--message", "longer",
        "--no-input",
    )  # fmt: skip
    assert forked.returncode == 0, forked.stderr
    assert "writer → critic: longer" in forked.stdout
    fork_id, path = fork_file(forked, folder)
    assert path.parent == folder and path.name == f"ask-fork-{fork_id}.jsonl"
    assert f"roost continue {path.name} --answer TEXT" in forked.stdout
    assert (folder / "ask.jsonl").read_bytes() == parent  # the parent is left untouched

    events = events_of(path)
    parent_events = events_of(folder / "ask.jsonl")
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert {e["run"] for e in events} == {fork_id}
    assert events[0]["parent"] == parent_events[0]["run"] and events[0]["fork_at"] == 7
    shared = [{**e, "run": fork_id} for e in parent_events[1:7]]
    assert events[1:7] == shared  # the same events, time stamps too
    assert events[7]["feedback"] == "longer" and events[8]["content"] == "longer"

    continued = roost(folder, "continue", path.name, "--answer", "ok", "--no-input")
    assert continued.returncode == 0, continued.stderr
    assert "critic → writer: ok" in continued.stdout
    events = events_of(path)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "terminate"

    shown = roost(folder, "show", path.name)
    assert shown.returncode == 0 and "↪ writer answered: longer" in shown.stdout
    assert "↪ critic answered: ok" in shown.stdout and "terminated" in shown.stdout
    replayed = roost(folder, "replay", path.name)
    assert replayed.returncode == 0 and f"identical: {len(events)} events" in replayed.stdout


def test_a_file_forks_with_answers_for_each_interrupt(folder: Path) -> None:
    forked = roost(
        folder, "fork", "ask.jsonl", "--at", AT_FIRST_INTERRUPT,
        "--answer", "longer", "--answer", "good", "--no-input",
    )  # fmt: skip
    assert forked.returncode == 0, forked.stderr
    assert "writer → critic: longer" in forked.stdout and "critic → writer: good" in forked.stdout
    _, path = fork_file(forked, folder)
    events = events_of(path)
    assert [e.get("feedback") for e in events if e["type"] == "resume"] == ["longer", "good"]
    assert events[-1]["type"] == "terminate"
    shown = roost(folder, "show", str(path))
    assert "↪ critic answered: good" in shown.stdout
    assert roost(folder, "replay", str(path)).returncode == 0


def test_a_fork_of_a_stored_file_is_stored_too(folder: Path) -> None:
    forked = roost(
        folder, "fork", "ask.jsonl", "--at", AT_FIRST_INTERRUPT, "--message", "longer",
        "--db", "run.db", "--no-input",
    )  # fmt: skip
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout.splitlines()[0].endswith(" and the store")
    fork_id, path = fork_file(forked, folder)
    assert "(fork at 7)" in roost(folder, "runs", "--db", "run.db").stdout

    continued = roost(folder, "continue", path.name, "--answer", "ok", "--db", "run.db")
    assert continued.returncode == 0, continued.stderr
    exported = roost(folder, "export", fork_id, "--db", "run.db").stdout
    assert exported == path.read_text()  # both copies went on together


def test_bad_fork_points_in_a_file_are_refused_in_one_line(folder: Path) -> None:
    run_id = events_of(folder / "ask.jsonl")[0]["run"]
    before = sorted(p.name for p in folder.iterdir())
    cases = {
        "99": f"run {run_id} has events 0 to 13: cannot fork at 99",
        "0": f"run {run_id} has events 0 to 13: cannot fork at 0",
        "6": f"run {run_id}: events 4 to 6 are one step; fork at 4 or 7",
    }
    for at, line in cases.items():
        refused = roost(folder, "fork", "ask.jsonl", "--at", at, "--no-input")
        assert refused.returncode == 2 and refused.stderr.strip() == line
    misplaced = roost(folder, "fork", "ask.jsonl", "--at", "4", "--message", "x")
    assert misplaced.returncode == 2 and "--message needs a fork point" in misplaced.stderr
    assert len(misplaced.stderr.strip().splitlines()) == 1
    missing = roost(folder, "fork", "nope.jsonl", "--at", "2")
    assert missing.returncode == 2 and missing.stderr.strip() == "nope.jsonl: no such event file"
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing was written
