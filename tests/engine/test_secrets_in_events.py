"""A value read from the environment never reaches an event, the store or the output."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from tests.cli_inprocess import Ran, run_cli
from tests.engine.conftest import SECRET, write_flow

if TYPE_CHECKING:
    from pathlib import Path


async def test_no_event_holds_a_secret_and_the_models_see_it_masked(tmp_path: Path) -> None:
    path = write_flow(tmp_path)
    flow = load_flow_text(path.read_text(), str(path), environ={"TOKEN": SECRET})
    log = MemoryLog("r")
    state = await Runner(flow=flow, log=log).start(f"use {SECRET} please")
    assert state.status == "terminated"
    dumped = "\n".join(e.model_dump_json() for e in log.load())
    assert SECRET not in dumped
    said = [(e.from_, e.content) for e in log.load() if e.type == "message"]
    assert said == [
        ("USER", "use *** please"),
        ("bot", "You help."),
        ("USER", "ok"),
        ("bot", "the key is ***"),
        # What a later reply is shown is built from the recorded, masked history.
        ("USER", "the key is ***"),
        ("bot", "TERMINATE"),
    ]
    call = next(e for e in log.load() if e.type == "tool_call")
    result = next(e for e in log.load() if e.type == "tool_result")
    assert call.arguments == {"text": "key *** here"}
    assert result.content == "heard: key *** here" and not result.is_error


def test_the_command_line_keeps_it_out_of_files_store_and_output(tmp_path: Path) -> None:
    path = write_flow(tmp_path)
    env = {**os.environ, "TOKEN": SECRET, "ROOST_DB": f"sqlite:///{tmp_path / 'roost.db'}"}

    def roost(*args: str) -> Ran:
        return run_cli(*args, cwd=tmp_path, env=env)

    message = f"use {SECRET} please"
    ran = roost("run", str(path), "--message", message, "--events", "run.jsonl", "--no-input")
    assert ran.returncode == 0, ran.stderr
    shown = roost("show", "run.jsonl")
    exported = roost("export", "run.jsonl")
    stored = (tmp_path / "roost.db").read_bytes()
    for text in (ran.stdout + ran.stderr, shown.stdout, exported.stdout):
        assert SECRET not in text
    assert "***" in exported.stdout
    assert SECRET.encode() not in stored
    assert SECRET not in (tmp_path / "run.jsonl").read_text()
