"""An agent's ``context:`` globs stay in the flow's folder, bounded, and a replay keeps to its own.

A glob such as ``/**/*.md`` or ``../../**`` walked the whole file system at
every reply, and ``roost replay`` read the context files a run file's flow
names, relative to whatever folder the run file says its flow was in. Now a
glob must stay inside the flow file's folder (refused, located, at
validation), a reply is given at most ``MAX_FILES`` files and ``MAX_BYTES``
bytes (else an error entry naming the agent), a link out of the folder is not
followed, and a replay of a run's own flow reads context files only inside the
folder it runs in.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING

from roost import load_flow
from roost.cli import main
from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import Event, LlmCallEvent, parse_event
from roost.nodes import context
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

SECRET_TEXT = "the private notes nobody may read"

FLOW = """\
roost: 1
name: notes
defaults: {{provider: mock, max_rounds: 2}}
providers:
  mock: {{kind: scripted, replies: [{{echo: last}}, thanks]}}
agents:
  user: {{role: You ask.}}
  helper: {{role: You help., context: {context}}}
start: {{from: user, to: helper, content: go}}
"""


def write_flow(folder: Path, context_globs: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "notes.yaml"
    path.write_text(FLOW.format(context=context_globs))
    return path


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        main(args)
    except SystemExit as exited:
        code = int(exited.code or 0)
    else:
        code = 0
    out, err = capsys.readouterr()
    return code, out + err


async def reply_of(path: Path) -> tuple[str, str]:
    """(status, the helper's echoed last message or the error entry's text) of one run."""
    log = MemoryLog("r")
    state = await Runner(flow=load_flow(path), log=log).start()
    entry = next(e for e in log.load() if e.type in ("message", "error") and e.from_ == "helper")
    return state.status, entry.content


def test_a_glob_that_leaves_the_flows_folder_is_refused_where_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_flow(tmp_path, '["/**/*.md", "../../**", "notes/*.md", "C:\\\\x", "a/../../b"]')
    code, out = run_main(["validate", str(path)], capsys)
    assert code == 2
    assert out.splitlines() == [
        f"{path}:8:39: error: agent 'helper': context '/**/*.md' is an absolute path; "
        "give a path relative to the flow file's folder",
        f"{path}:8:51: error: agent 'helper': context '../../**' climbs out of the flow "
        "file's folder with '..'; give a path inside it",
        f"{path}:8:77: error: agent 'helper': context 'C:\\\\x' is an absolute path; "
        "give a path relative to the flow file's folder",
        f"{path}:8:86: error: agent 'helper': context 'a/../../b' climbs out of the flow "
        "file's folder with '..'; give a path inside it",
    ]


async def test_more_files_than_a_reply_is_given_stop_the_reply_naming_the_agent(
    tmp_path: Path,
) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for index in range(context.MAX_FILES + 1):
        (many / f"{index:03d}.txt").write_text("x")
    status, text = await reply_of(write_flow(tmp_path, "[many/*.txt]"))
    assert status == "error"
    assert text == (
        "agent 'helper': context 'many/*.txt' brings the files of one reply past 100, "
        "the most a reply is given; name fewer files"
    )


async def test_more_bytes_than_a_reply_is_given_stop_the_reply_naming_the_agent(
    tmp_path: Path,
) -> None:
    (tmp_path / "small.md").write_text("a small note")
    (tmp_path / "big.md").write_bytes(b"x" * context.MAX_BYTES)
    status, text = await reply_of(write_flow(tmp_path, "['*.md']"))
    assert status == "error"
    assert text == (
        "agent 'helper': context file 'small.md' brings the context of one reply past "
        "1,048,576 bytes, the most a reply is given; name fewer or smaller files"
    )


async def test_a_link_out_of_the_flows_folder_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "private.txt").write_text(SECRET_TEXT)
    notes = tmp_path / "project" / "notes"
    notes.mkdir(parents=True)
    (notes / "plan.md").write_text("the plan")
    os.symlink(tmp_path / "private.txt", notes / "leak.md")
    status, text = await reply_of(write_flow(tmp_path / "project", "['notes/*.md']"))
    assert status == "terminated"
    assert SECRET_TEXT not in text
    assert "### notes/leak.md\n(a link to a file outside the flow's folder: not read)" in text
    assert "### notes/plan.md\nthe plan" in text


def record_run(folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A real run of a flow in ``folder`` whose helper reads ``secret.txt`` there."""
    (folder / "secret.txt").write_text(SECRET_TEXT)
    path = write_flow(folder, "[secret.txt]")
    events = folder / "run.jsonl"
    code, _ = run_main(["run", str(path), "--events", str(events), "--no-input"], capsys)
    assert code == 0
    assert SECRET_TEXT in events.read_text()  # the helper echoed its context
    return events


def recorded(path: Path) -> list[Event]:
    return [parse_event(json.loads(line)) for line in path.read_text().splitlines()]


def test_a_replay_reads_no_context_file_outside_the_folder_it_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_file = record_run(elsewhere, capsys)
    # The run file names its flow by absolute path, a folder outside where replay runs:
    # as a run file made to read someone's files would.
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    events = recorded(run_file)
    call = next(e for e in events if isinstance(e, LlmCallEvent))
    report = asyncio.run(replay_run(None, events, capture=call.seq))
    assert report.request is not None
    sent = report.request.messages[-1].content
    assert SECRET_TEXT not in sent
    assert sent.endswith(
        "### secret.txt\n(not read: a replay reads only context files inside the folder it runs in)"
    )
    assert not report.identical  # the recorded request held the file: the replay says so
    code, out = run_main(["replay", str(run_file)], capsys)
    assert code == 4
    assert SECRET_TEXT not in out


def test_a_replay_inside_the_flows_folder_reads_its_context_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = record_run(tmp_path, capsys)
    monkeypatch.chdir(tmp_path)
    assert asyncio.run(replay_run(None, recorded(run_file))).identical
    assert run_main(["replay", str(run_file)], capsys)[0] == 0


def test_a_run_file_whose_flow_globs_outside_its_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file = record_run(tmp_path, capsys)
    lines = run_file.read_text().splitlines()
    start = json.loads(lines[0])
    start["flow"]["text"] = start["flow"]["text"].replace("[secret.txt]", '["/**/*"]')
    lines[0] = json.dumps(start)
    run_file.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    code, out = run_main(["replay", str(run_file)], capsys)
    assert code == 2
    assert "context '/**/*' is an absolute path" in out
    assert len(out.strip().splitlines()) == 1
