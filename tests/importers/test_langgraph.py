"""``roost import --from langgraph``: SqliteSaver databases written by LangGraph itself
(tests/fixtures/importers/make_langgraph.py) become runs that show, replay and diff;
a database of another kind, a corrupt value or a pickle is one line, nothing stored."""

from __future__ import annotations

import pickle
import shutil
import sqlite3
import sys
from datetime import datetime
from typing import TYPE_CHECKING

import msgpack
import pytest

from roost.importers import import_run
from roost.importers.langgraph import checkpoint_time, decode
from roost.importers.model import ImportFormatError
from tests.importers.conftest import FIXTURES, messages, roost

if TYPE_CHECKING:
    from pathlib import Path

TOOLS = FIXTURES / "langgraph_tools.sqlite"
GROUP = FIXTURES / "langgraph_group.sqlite"


def events_of(path: Path, thread: str | None = None) -> list[dict]:
    _, events, _ = import_run(path, "langgraph", "r", thread)
    return [e.model_dump(by_alias=True, mode="json") for e in events]


@pytest.mark.parametrize(("path", "thread"), [(TOOLS, None), (GROUP, "haiku"), (GROUP, "short")])
def test_each_thread_imports_shows_and_replays_identical(
    tmp_path: Path, path: Path, thread: str | None
) -> None:
    args = ["--thread", thread] if thread else []
    done = roost(tmp_path, "import", str(path), "--from", "langgraph", *args)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[2]
    assert "terminated" in roost(tmp_path, "show", run_id).stdout
    replayed = roost(tmp_path, "replay", run_id)
    assert replayed.returncode == 0 and replayed.stdout.startswith("identical"), replayed.stdout


def test_tool_calls_pair_the_failing_one_is_an_error_and_the_person_answers() -> None:
    events = events_of(TOOLS)
    assert messages(events) == [
        ("user", "agent", "How much is 2 + 2, and 1 / 0?"),
        ("agent", "user", "2 + 2 = 4; 1 / 0 has no value. Anything else?"),
        ("user", "agent", "No, thank you."),
        ("agent", "user", "Then we are done."),
    ]
    results = [(e["id"], e["is_error"]) for e in events if e["type"] == "tool_result"]
    assert results == [("call_1", False), ("call_2", True)]
    assert [e["feedback"] for e in events if e["type"] == "resume"] == ["No, thank you."]
    calls = [e for e in events if e["type"] == "llm_call"]
    assert {e["model"] for e in calls} == {"fake-maths"}
    # the last reply recorded no usage: its replayed call counts none
    assert [e["usage"]["prompt_tokens"] for e in calls] == [40, 60, 0]
    start = events[0]["imported"]
    assert (start["format"], start["file"], start["thread"]) == (
        "langgraph",
        "langgraph_tools.sqlite",
        "maths",
    )


def test_the_times_are_the_checkpoints_and_agree_with_what_langgraph_wrote_in_them() -> None:
    said = [e["ts"] for e in events_of(TOOLS) if e["type"] == "message"]
    assert said == sorted(said) and len(set(said)) == 4
    db = sqlite3.connect(f"{TOOLS.as_uri()}?mode=ro", uri=True)
    kind, blob = db.execute(
        "SELECT type, checkpoint FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
    ).fetchone()
    db.close()
    written = datetime.fromisoformat(decode(kind, blob, "latest")["ts"])
    last = datetime.fromisoformat(said[-1])
    assert abs((written - last).total_seconds()) < 0.01  # the id's time and the blob's agree


def test_a_group_of_nodes_goes_through_a_channel_and_keeps_the_shared_system_message() -> None:
    events = events_of(GROUP, "haiku")
    assert [e["chosen"] for e in events if e["type"] == "select"] == ["writer", "critic", "editor"]
    text = events[0]["flow"]["text"]
    assert text.count("role: You write haiku together.") == 3


def test_a_diff_of_an_imported_run_and_its_fork_says_where_they_part(tmp_path: Path) -> None:
    done = roost(tmp_path, "import", str(TOOLS), "--from", "langgraph")
    run_id = done.stdout.split()[2]
    same = roost(tmp_path, "diff", run_id, run_id)
    assert same.returncode == 0, same.stdout + same.stderr
    forked = roost(tmp_path, "fork", run_id, "--at", "8", "--answer", "Yes: 3 + 3?")
    assert forked.returncode == 0, forked.stderr
    fork_id = forked.stdout.split()[1].rstrip(":")
    parted = roost(tmp_path, "diff", run_id, fork_id)
    assert parted.returncode == 4, parted.stdout + parted.stderr
    assert "they part at event 8" in parted.stdout
    assert "No, thank you." in parted.stdout and "Yes: 3 + 3?" in parted.stdout


def copy(tmp_path: Path, path: Path = TOOLS) -> Path:
    target = tmp_path / "copy.sqlite"
    shutil.copy(path, target)
    return target


def spoil(path: Path, sql: str, *args: object) -> Path:
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()
    return path


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    text = tmp_path / "notes.sqlite"
    text.write_text("hello, I am not a database\n" * 100)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE runs (id TEXT)")
    empty = spoil(copy(tmp_path), "DELETE FROM checkpoints")
    return {
        "text": (text, "notes.sqlite: cannot be read as a SQLite database"),
        "other": (other, "other.sqlite: not a LangGraph SqliteSaver database"),
        "empty": (empty, "copy.sqlite: the database holds no checkpoints"),
    }


@pytest.mark.parametrize("case", ["text", "other", "empty"])
def test_a_file_that_is_no_checkpointer_is_one_line_exit_2_nothing_stored(
    tmp_path: Path, case: str
) -> None:
    path, said = bad_files(tmp_path)[case]
    done = roost(tmp_path, "import", str(path), "--from", "langgraph")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith(said), done.stderr
    assert "no runs stored" in roost(tmp_path, "runs").stdout


@pytest.mark.parametrize(
    ("thread", "said"),
    [
        (None, "langgraph_group.sqlite: 2 threads (haiku, short): pick one with --thread"),
        ("nope", "langgraph_group.sqlite: no thread 'nope'; it holds haiku, short"),
    ],
)
def test_a_thread_not_named_or_not_there_lists_the_threads(
    tmp_path: Path, thread: str | None, said: str
) -> None:
    args = ["--thread", thread] if thread else []
    done = roost(tmp_path, "import", str(GROUP), "--from", "langgraph", *args)
    assert (done.returncode, done.stderr.strip()) == (2, said)


def test_a_corrupt_value_names_the_thread_and_the_checkpoint(tmp_path: Path) -> None:
    path = spoil(copy(tmp_path), "UPDATE checkpoints SET checkpoint = ?", b"\xc1\x00")
    with pytest.raises(
        ImportFormatError, match=r"copy.sqlite: thread 'maths': the latest .* msgpack"
    ):
        import_run(path, "langgraph", "r")


class Trap:
    """A pickle that, if it were ever loaded, would write a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


def test_a_pickled_checkpoint_is_refused_and_never_loaded(tmp_path: Path) -> None:
    sprung = tmp_path / "sprung"
    blob = pickle.dumps(Trap(sprung))
    path = spoil(copy(tmp_path), "UPDATE checkpoints SET type = 'pickle', checkpoint = ?", blob)
    done = roost(tmp_path, "import", str(path), "--from", "langgraph")
    assert done.returncode == 2 and "a pickled value, which roost never loads" in done.stderr
    assert not sprung.exists()


def test_a_class_named_in_a_value_is_data_never_imported(tmp_path: Path) -> None:
    """LangGraph's msgpack names a module and class; reading it must not import that module."""
    named = msgpack.packb(["roost_trap_module_never_there", "Boom", {"type": "ai"}, "make"])
    value = msgpack.packb({"messages": [msgpack.ExtType(5, named)]})
    read = decode("msgpack", value, "here")
    assert read["messages"][0].module == "roost_trap_module_never_there"
    assert "roost_trap_module_never_there" not in sys.modules


def test_without_msgpack_the_hint_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "msgpack", None)
    with pytest.raises(ImportFormatError, match=r"pip install 'roost\[langgraph\]'"):
        import_run(TOOLS, "langgraph", "r")


def test_a_langchain_json_value_reads_as_the_msgpack_one() -> None:
    as_json = (
        b'{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages",'
        b' "AIMessage"], "kwargs": {"content": "hi", "type": "ai"}}'
    )
    read = decode("json", as_json, "here")
    assert (read.name, read.value["content"]) == ("AIMessage", "hi")


def one_checkpoint(path: Path, *messages: dict) -> Path:
    """A checkpointer database holding one checkpoint and no writes (as an older or pruned one)."""
    listed = [
        msgpack.ExtType(
            5, msgpack.packb(["langchain_core.messages", "M", m, "model_validate_json"])
        )
        for m in messages
    ]
    state = msgpack.packb({"v": 4, "channel_values": {"messages": listed}})
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT,"
        " parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB)"
    )
    db.execute("INSERT INTO checkpoints VALUES ('t', '', 'c1', NULL, 'msgpack', ?, '{}')", (state,))
    db.commit()
    db.close()
    return path


def test_a_tool_result_that_names_no_call_is_refused(tmp_path: Path) -> None:
    path = one_checkpoint(
        tmp_path / "orphan.sqlite",
        {"type": "human", "content": "2 + 2?", "id": "h1"},
        {"type": "ai", "content": "", "id": "a1", "tool_calls": [{"id": "c1", "name": "add"}]},
        {"type": "tool", "content": "4", "id": "t1", "tool_call_id": "nope"},
    )
    done = roost(tmp_path, "import", str(path), "--from", "langgraph")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "orphan.sqlite: thread 't': message 2: tool result for 'nope' names no call"
    )


def test_without_writes_the_speakers_are_the_messages_names(tmp_path: Path) -> None:
    path = one_checkpoint(
        tmp_path / "plain.sqlite",
        {"type": "human", "content": "Hello.", "id": "h1", "name": "ann"},
        {"type": "AIMessageChunk", "content": "Hi.", "id": "a1", "name": "helper"},
    )
    _, events, notes = import_run(path, "langgraph", "r")
    said = [(e.from_, e.content) for e in events if e.type == "message"]  # type: ignore[union-attr]
    assert said == [("ann", "Hello."), ("helper", "Hi.")]
    assert any(note.startswith("nodes and times: the database keeps no writes") for note in notes)


def test_a_fork_of_a_langgraph_group_goes_on_under_a_scripted_flow(tmp_path: Path) -> None:
    done = roost(tmp_path, "import", str(GROUP), "--from", "langgraph", "--thread", "haiku")
    run_id = done.stdout.split()[2]
    flow = (
        "roost: 1\nname: onwards\ndefaults: {provider: live, max_rounds: 20}\n"
        "providers:\n  live: {kind: scripted, replies: [critic, 'A new line. TERMINATE'],"
        " when_exhausted: repeat_last}\n"
        "agents: {user: {}, writer: {}, critic: {}, editor: {}}\n"
        "channels:\n  chat:\n    members: [user, writer, critic, editor]\n    max_rounds: 20\n"
        "    director: {strategy: llm, provider: live, allow_repeat: true}\n"
    )
    (tmp_path / "onwards.yaml").write_text(flow)
    forked = roost(tmp_path, "fork", run_id, "--at", "9", "--flow", "onwards.yaml")
    assert forked.returncode == 0, forked.stderr
    assert "A new line. TERMINATE" in forked.stdout


def test_a_thread_forked_in_its_past_imports_the_branch_its_latest_checkpoint_ends() -> None:
    events = events_of(FIXTURES / "langgraph_fork.sqlite")
    assert messages(events) == [
        ("user", "teller", "Tell a story."),
        ("teller", "user", "A second telling."),
    ]
    db = sqlite3.connect(f"{(FIXTURES / 'langgraph_fork.sqlite').as_uri()}?mode=ro", uri=True)
    ids = [row[0] for row in db.execute("SELECT checkpoint_id FROM checkpoints ORDER BY 1")]
    db.close()
    reply = [e["ts"] for e in events if e["type"] == "message"][-1]
    assert (
        reply == checkpoint_time(ids[-1]) and len(ids) == 5
    )  # the abandoned branch is still there
