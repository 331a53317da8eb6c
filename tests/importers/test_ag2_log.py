"""``roost import --from ag2`` of AG2's runtime_logging SQLite database (made by AG2 0.14.0
in tests/fixtures/importers/make_ag2.py): the model calls it logged become the chat."""

from __future__ import annotations

import json
import shutil
import sqlite3
from typing import TYPE_CHECKING

import pytest

from roost.importers import import_run
from roost.importers.model import ImportFormatError
from tests.importers.conftest import FIXTURES, events_of, messages, roost

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("name", ["ag2_log.sqlite", "ag2_log_group.sqlite"])
def test_each_log_imports_shows_and_replays_identical(tmp_path: Path, name: str) -> None:
    done = roost(tmp_path, "import", str(FIXTURES / name), "--from", "ag2")
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[2]
    assert "terminated" in roost(tmp_path, "show", run_id).stdout
    replayed = roost(tmp_path, "replay", run_id)
    assert replayed.returncode == 0 and replayed.stdout.startswith("identical"), replayed.stdout


def test_the_log_gives_the_chat_the_json_gives_with_models_usage_and_times() -> None:
    events = events_of("ag2_log.sqlite", "ag2")
    assert messages(events) == [
        ("user_proxy", "maths_bot", "How much is 2 + 2, and 1 / 0?"),
        ("maths_bot", "user_proxy", "2 + 2 = 4, and 1 / 0 has no value. TERMINATE"),
    ]
    results = [(e["id"], e["content"], e["is_error"]) for e in events if e["type"] == "tool_result"]
    assert results == [("call_1", "4", False), ("call_2", "Error: division by zero", True)]
    calls = [e for e in events if e["type"] == "llm_call"]
    assert {(e["model"], e["usage"]["prompt_tokens"]) for e in calls} == {("maths_bot", 30)}
    said = [e["ts"] for e in events if e["type"] == "message"]
    assert said == ["2026-12-02T17:15:04.993037Z", "2026-12-02T17:15:05.247824Z"]
    start = events[0]
    assert start["imported"]["shape"] == "runtime_logging"
    assert "role: You are a careful mathematician." in start["flow"]["text"]


def test_a_logged_group_chat_reads_each_speaker_once() -> None:
    events = events_of("ag2_log_group.sqlite", "ag2")
    assert [m[0] for m in messages(events)] == ["writer", "critic", "editor"]
    assert [e["chosen"] for e in events if e["type"] == "select"] == ["critic", "editor"]


def spoiled(tmp_path: Path, sql: str, *args: object) -> Path:
    path = tmp_path / "log.sqlite"
    shutil.copy(FIXTURES / "ag2_log.sqlite", path)
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize(
    ("sql", "args", "said"),
    [
        ("DELETE FROM chat_completions", (), "log.sqlite: the log holds no chat_completions rows"),
        (
            "UPDATE chat_completions SET request = ? WHERE id = 2",
            ("{not json",),
            "log.sqlite: chat_completions row 2: its request is not JSON",
        ),
        (
            "UPDATE chat_completions SET response = ? WHERE id = 1",
            (json.dumps({"response": None}),),
            "log.sqlite: chat_completions row 1: its response has no choices",
        ),
        ("DROP TABLE chat_completions", (), "log.sqlite: not an AG2 runtime_logging database"),
    ],
)
def test_a_spoiled_log_is_one_located_line_and_nothing_stored(
    tmp_path: Path, sql: str, args: tuple, said: str
) -> None:
    path = spoiled(tmp_path, sql, *args)
    done = roost(tmp_path, "import", str(path), "--from", "ag2")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith(said), done.stderr
    assert "no runs stored" in roost(tmp_path, "runs").stdout


def test_a_langgraph_database_is_not_an_ag2_log() -> None:
    with pytest.raises(ImportFormatError, match="not an AG2 runtime_logging database"):
        import_run(FIXTURES / "langgraph_tools.sqlite", "ag2", "r")


def test_a_logged_group_draws_and_goes_on_under_a_scripted_flow(tmp_path: Path) -> None:
    done = roost(tmp_path, "import", str(FIXTURES / "ag2_log_group.sqlite"), "--from", "ag2")
    run_id = done.stdout.split()[2]
    exported = roost(tmp_path, "export", run_id)
    (tmp_path / "imported.yaml").write_text(
        json.loads(exported.stdout.splitlines()[0])["flow"]["text"]
    )
    drawn = roost(tmp_path, "render", "imported.yaml", "--run", run_id, "-o", "group.svg")
    assert drawn.returncode == 0, drawn.stderr
    svg = (tmp_path / "group.svg").read_text()
    assert all(name in svg for name in ("writer", "critic", "editor"))
    onwards = (
        "roost: 1\nname: onwards\ndefaults: {provider: live, max_rounds: 20}\n"
        "providers:\n  live: {kind: scripted, replies: [editor, 'Autumn wind. TERMINATE'],"
        " when_exhausted: repeat_last}\n"
        "agents: {writer: {}, critic: {}, editor: {}}\n"
        "channels:\n  chat:\n    members: [writer, critic, editor]\n    max_rounds: 20\n"
        "    director: {strategy: llm, provider: live, allow_repeat: true}\n"
    )
    (tmp_path / "onwards.yaml").write_text(onwards)
    forked = roost(tmp_path, "fork", run_id, "--at", "5", "--flow", "onwards.yaml")
    assert forked.returncode == 0, forked.stderr
    assert "Autumn wind. TERMINATE" in forked.stdout
