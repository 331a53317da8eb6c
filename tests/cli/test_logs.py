"""Where the command line keeps a run: a new run's --events file, and an event file read back."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.commands import roost

REPO = Path(__file__).resolve().parents[2]
FLOWS = REPO / "flows"


def test_events_into_a_folder_that_does_not_exist_make_it(tmp_path: Path, ask: Path) -> None:
    events = tmp_path / "recordings" / "deep" / "x.jsonl"  # as a test file's replay: names it
    result = roost("run", str(ask), "--events", str(events), "--no-input", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(events.read_text().splitlines()[0])["type"] == "run_start"
    (tmp_path / "afile").write_text("")
    refused = roost("run", str(ask), "--events", "afile/x.jsonl", cwd=tmp_path)
    assert (refused.returncode, refused.stderr) == (
        2,
        "afile/x.jsonl: cannot make the folder 'afile': File exists\n",
    )


def test_a_corrupt_event_file_cannot_be_continued_exit_2(tmp_path: Path, ask: Path) -> None:
    assert roost("run", str(ask), "--events", "run.jsonl", cwd=tmp_path).returncode == 0
    lines = (tmp_path / "run.jsonl").read_text().splitlines()
    foreign = json.dumps({**json.loads(lines[1]), "run": "someone-else"})
    (tmp_path / "bad.jsonl").write_text("\n".join([lines[0], foreign, *lines[2:]]) + "\n")
    for command in ("continue", "retry", "show", "replay"):
        args = ["--answer", "x"] if command == "continue" else []
        result = roost(command, "bad.jsonl", *args, cwd=tmp_path)
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr.strip().splitlines() == [result.stderr.strip()]
        assert "bad.jsonl:2:" in result.stderr and "someone-else" in result.stderr


def test_pipes_and_devices_are_read_or_written_as_files_never(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")
    result = roost("run", str(FLOWS / "hello.yaml"), "--events", "pipe", cwd=tmp_path)
    assert result.returncode == 2 and "pipe: not a regular file" in result.stderr
    flow = tmp_path / "ctx.yaml"
    flow.write_text(
        "roost: 1\nproviders: {mock: {kind: scripted, replies: [{echo: last}, TERMINATE]}}\n"
        "agents:\n  USER: {role: u, provider: mock}\n"
        "  bot: {role: b, provider: mock, context: [pipe]}\n"
        "start: {from: USER, to: bot, content: hi}\n"
    )
    done = roost("run", str(flow), "--events", "run.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(not a regular file: not read)" in (tmp_path / "run.jsonl").read_text()
