"""Tampered logs: a run file or a stored run edited by someone else, read by every command.

A JSON Lines run is recorded once (a chat paused at its interrupt), then
altered one way per case and handed to each command that reads a run. A log
that breaks the rules of a log (one run, seq 0, 1, 2..., known events with
fields of the right types, UTF-8 text) is refused by every reader in one
line naming the file and line, exit status 2, and nothing is written
anywhere. A log that keeps those rules but tells another story (a message
from a node the flow lacks, a result without its call) is read; ``replay``
then names the first event that the flow does not reproduce. Harmless
framing (CRLF, a BOM, blank lines) reads as the clean file does.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from cli_process import run_cli

from roost.cli import main
from roost.store.jsonl import JsonlLog
from tests.attacks.conftest import Cli, Said

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: chat
providers:
  p: {kind: scripted, replies: ["one", "two", TERMINATE]}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p}
start: {from: USER, to: bot, content: hello}
"""
FILE = "tampered.jsonl"

Lines = list[bytes]  # the recorded file's lines, each with its newline
Tamper = Callable[[Lines], bytes]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Lines:
    """The lines of a run paused at its interrupt: run_start, message, llm_call, message,
    interrupt."""
    folder = tmp_path_factory.mktemp("recorded")
    (folder / "chat.yaml").write_text(FLOW)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.delenv("ROOST_DB", raising=False)
        patch.setattr("sys.stdin", io.StringIO(""))
        main(["run", "chat.yaml", "--no-input", "--events", "run.jsonl", "--db", "r.db"])
    lines = (folder / "run.jsonl").read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["type"] for line in lines] == [
        "run_start", "message", "llm_call", "message", "interrupt",
    ]  # fmt: skip
    return lines


# ------------------------------------------------------------------ ways to tamper


def edited(change: Callable[[list[dict[str, Any]]], list[dict[str, Any]] | None]) -> Tamper:
    """A tamper that edits the events as dicts; ``change`` edits in place or returns new ones."""

    def tamper(lines: Lines) -> bytes:
        events = [json.loads(line) for line in lines]
        events = change(events) or events
        return b"".join(json.dumps(event).encode() + b"\n" for event in events)

    return tamper


def field(index: int, key: str, value: Any) -> Tamper:
    return edited(lambda events: events[index].__setitem__(key, value))


def dropped(index: int, key: str) -> Tamper:
    return edited(lambda events: events[index].__delitem__(key))


def replaced(old: bytes, new: bytes) -> Tamper:
    """A tamper on the bytes: ``old`` (which must be there) becomes ``new``."""

    def tamper(lines: Lines) -> bytes:
        data = b"".join(lines)
        assert old in data
        return data.replace(old, new)

    return tamper


def line_inserted(index: int, line: bytes) -> Tamper:
    return lambda lines: b"".join([*lines[:index], line, *lines[index:]])


def inserted(index: int, **event: Any) -> Tamper:
    """An event put in before ``index`` (the later seqs renumbered to leave no gap)."""

    def change(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        events.insert(index, {"seq": 0, "run": events[0]["run"], "ts": events[1]["ts"], **event})
        return [{**e, "seq": seq} for seq, e in enumerate(events)]

    return edited(change)


def cases(table: list[tuple[Any, ...]]) -> list[Any]:
    """The rows of ``table`` as test cases, each named by its first item."""
    return [pytest.param(*row, id=row[0]) for row in table]


def nested(depth: int) -> bytes:
    return b"[" * depth + b"1" + b"]" * depth


# (name, tamper, the line of the file at fault, what every reader says about it)
REFUSED: list[tuple[str, Tamper, int, str]] = [
    # order, gaps and duplicates
    ("swapped", edited(lambda e: [e[0], e[2], e[1], e[3], e[4]]), 2, "event seq 2 where 1 was"),
    ("duplicated", edited(lambda e: [*e[:3], e[2], *e[3:]]), 4, "event seq 2 where 3 was"),
    ("gap", edited(lambda e: [e[0], e[1], e[3], e[4]]), 3, "event seq 3 where 2 was expected"),
    ("from 1", edited(lambda e: [{**x, "seq": x["seq"] + 1} for x in e]), 1, "event seq 1 where 0"),
    ("negative seq", field(1, "seq", -1), 2, "event seq -1 where 1 was expected"),
    ("huge seq", field(2, "seq", 10**30), 3, f"event seq {10**30} where 2 was expected"),
    ("infinite seq", replaced(b'"seq":2,', b'"seq":1e999,'), 3, "invalid event: llm_call.seq: "),
    ("fraction seq", field(2, "seq", 2.5), 3, "invalid event: llm_call.seq: Input should be a"),
    ("null seq", field(2, "seq", None), 3, "invalid event: llm_call.seq: Input should be a"),
    # one log, one run
    ("another run", field(3, "run", "someone-else"), 4, "event of run 'someone-else' in the log"),
    (
        "second run_start",
        edited(lambda e: [*e[:3], {**e[0], "seq": 3}, e[4]]),
        4,
        "a second run_start at seq 3: a log holds one run",
    ),
    # fields missing or of the wrong type
    ("no seq", dropped(2, "seq"), 3, "invalid event: llm_call.seq: Field required"),
    ("no run", dropped(2, "run"), 3, "invalid event: llm_call.run: Field required"),
    ("no ts", dropped(2, "ts"), 3, "invalid event: llm_call.ts: Field required"),
    ("no type", dropped(2, "type"), 3, "invalid event: : Unable to extract tag using discrim"),
    ("no content", dropped(3, "content"), 4, "invalid event: message.content: Field required"),
    ("no flow", dropped(0, "flow"), 1, "invalid event: run_start.flow: Field required"),
    ("number content", field(3, "content", 42), 4, "invalid event: message.content: Input should"),
    ("object content", field(3, "content", {"a": 1}), 4, "invalid event: message.content: Input"),
    ("list from", field(3, "from", ["bot"]), 4, "invalid event: message.from: Input should be a"),
    ("number ts", field(3, "ts", 12), 4, "invalid event: message.ts: Input should be a valid str"),
    ("unknown state", field(3, "state", "maybe"), 4, "invalid event: message.state: Input should"),
    ("error state", field(3, "state", "error"), 4, "invalid event: message.state: Input should"),
    (
        "string tokens",
        edited(lambda e: e[2].__setitem__("usage", {"prompt_tokens": "many"})),
        3,
        "invalid event: llm_call.usage.prompt_tokens: Input should be a valid integer",
    ),
    # unknown types, lines that are no event
    ("unknown type", field(3, "type", "gossip"), 4, "event type 'gossip' is unknown to this"),
    ("unknown type last", field(4, "type", "gossip"), 5, "event type 'gossip' is unknown"),
    ("array line", line_inserted(2, b"[1, 2]\n"), 3, "not a JSON object"),
    ("string line", line_inserted(2, b'"hello"\n'), 3, "not a JSON object"),
    ("torn middle line", lambda ls: b"".join([*ls[:2], ls[2][:40], b"\n", *ls[3:]]), 3, "not JSON"),
    # bytes and text that no JSON or UTF-8 reader takes
    (
        "deep nesting",
        replaced(b'"response":{', b'"response":{"x":' + nested(50000) + b","),
        3,
        "not JSON: maximum recursion depth exceeded",
    ),
    ("deep line", line_inserted(1, nested(200000) + b"\n"), 2, "not JSON: maximum recursion"),
    ("raw NUL", replaced(b'"one"', b'"o\x00ne"'), 3, "not JSON: Invalid control character at"),
    ("invalid UTF-8", replaced(b'"one"', b'"o\xffne"'), 3, "not JSON: 'utf-8' codec can't decode"),
    ("overlong UTF-8", replaced(b'"one"', b'"o\xc0\xafne"'), 3, "not JSON: 'utf-8' codec can't"),
    (
        "lone surrogate",
        replaced(b'"one"', b'"o\\ud800ne"'),
        3,
        "invalid event: a \\u escape names half of a UTF-16 surrogate pair",
    ),
    (
        "lone low surrogate",
        replaced(b'"hello"', b'"\\udc00hello"'),
        2,
        "invalid event: a \\u escape names half of a UTF-16 surrogate pair",
    ),
]


def run_file_readers(name: str) -> dict[str, tuple[str, ...]]:
    """Every command that reads a run, given the run file ``name``."""
    return {
        "show": ("show", name),
        "export": ("export", name),
        "continue": ("continue", name, "--answer", "more", "--no-input"),
        "retry": ("retry", name),
        "replay": ("replay", name),
        "fork": ("fork", name, "--at", "2", "--no-input"),
        "import": ("import", name, "--db", "imported.db"),
        "render": ("render", "chat.yaml", "--run", name, "-o", "run.html"),
    }


READERS = list(run_file_readers(FILE))


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes; a database's rows rather than its pages
    (SQLite moves committed pages from its -wal file when it likes)."""
    return {
        str(path.relative_to(folder)): _rows(path) if path.suffix == ".db" else path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.endswith(("-wal", "-shm"))
    }


def _rows(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    try:
        return "\n".join(conn.iterdump()).encode()
    finally:
        conn.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "chat.yaml").write_text(FLOW)
    return tmp_path


def read_with(cli: Cli, folder: Path, data: bytes, reader: str) -> tuple[Said, dict[str, bytes]]:
    """What ``reader`` said of the run file ``data``, and the folder before it ran."""
    (folder / FILE).write_bytes(data)
    before = snapshot(folder)
    return cli(*run_file_readers(FILE)[reader]), before


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("name", "tamper", "line", "problem"), cases(REFUSED))
def test_a_log_that_breaks_the_rules_is_refused_by_every_reader(
    cli: Cli, folder: Path, recorded: Lines, reader: str, name: str, tamper: Tamper, line: int,
    problem: str,
) -> None:  # fmt: skip
    said, before = read_with(cli, folder, tamper(recorded), reader)
    assert said.code == 2
    assert said.line.startswith(f"{FILE}:{line}: {problem}"), said.line
    assert snapshot(folder) == before  # nothing written: not the file, no store, no page


# ------------------------------------------------------------------ framing that is harmless


def normalized(said: Said, name: str) -> tuple[int, str, str]:
    """What a command said, with the file's name and any run id made neutral."""

    def neutral(text: str) -> str:
        text = re.sub(r"\d{8}-\d{6}-[0-9a-f]{6}", "RUN", text)
        return text.replace(name.removesuffix(".jsonl"), "FILE")

    return said.code, neutral(said.out), neutral(said.err)


HARMLESS: list[tuple[str, Tamper]] = [
    ("CRLF line ends", lambda lines: b"".join(lines).replace(b"\n", b"\r\n")),
    ("byte order mark", lambda lines: b"\xef\xbb\xbf" + b"".join(lines)),
    ("blank lines", lambda lines: b"\n \n".join(lines) + b"\n\t\n"),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("name", "tamper"), cases(HARMLESS))
def test_harmless_framing_reads_as_the_clean_file(
    cli: Cli, folder: Path, recorded: Lines, reader: str, name: str, tamper: Tamper
) -> None:
    (folder / "clean.jsonl").write_bytes(b"".join(recorded))
    clean = cli(*run_file_readers("clean.jsonl")[reader])
    (folder / "imported.db").unlink(missing_ok=True)
    said, _ = read_with(cli, folder, tamper(recorded), reader)
    assert normalized(said, FILE) == normalized(clean, "clean.jsonl")
    log = JsonlLog(folder / FILE)
    assert [event.seq for event in log.load()] == list(range(len(log.load())))
    assert log.warnings == []


def test_a_torn_last_line_is_skipped_with_one_warning_by_every_reader(
    cli: Cli, folder: Path, recorded: Lines
) -> None:
    torn = recorded[4][: len(recorded[4]) // 2].replace(b'"seq":4', b'"seq":5')
    data = b"".join(recorded) + torn
    warning = f"roost: warning: {FILE}:6: ignored a torn last line (not JSON: "
    for reader in ("show", "export", "replay", "fork", "render"):
        said, before = read_with(cli, folder, data, reader)
        assert said.code == 0, reader
        assert reader == "render" or said.line.startswith(warning), reader
        assert (folder / FILE).read_bytes() == data  # only a continued run cuts it off
    said, before = read_with(cli, folder, data, "import")
    assert said.code == 2 and said.line.startswith(f"{FILE}:6: ignored a torn last line")
    assert snapshot(folder) == before


# ------------------------------------------------------------------ well-formed, but another story

# (name, tamper, the seq replay names): each log keeps the rules, so every reader reads it
# and a replay, which re-executes the flow, names the first event the flow does not give.
RETOLD: list[tuple[str, Tamper, int]] = [
    (
        "result without its call",
        inserted(
            3, type="tool_result", agent="bot", id="c9", name="add", content="4", is_error=False
        ),
        3,
    ),
    ("message from a stranger", field(3, "from", "mallory"), 3),
    ("interrupt to a stranger", field(4, "to", "mallory"), 4),
    (
        "select in no channel",
        inserted(3, type="select", channel="nowhere", candidates=["bot"], chosen="bot", by="llm"),
        3,
    ),
    (
        "resume without interrupt",
        inserted(3, type="resume", feedback="x", **{"from": "USER", "to": "bot"}),
        3,
    ),
    ("a reply rewritten", field(3, "content", "I never said this"), 3),
    ("a reply of 8 MiB", field(3, "content", "x" * (8 << 20)), 3),
    ("an escaped NUL", field(3, "content", "o\u0000ne"), 3),
    ("a key given twice", replaced(b'"content":"one"', b'"content":"one","content":"evil"'), 3),
    ("a field added", field(3, "mood", "cheerful"), 3),
    (
        "a flow event that does not parse",
        inserted(
            3,
            type="flow",
            flow={"path": "x.yaml", "name": "x", "hash": "sha256:0", "text": "roost: 1\nname: [\n"},
        ),
        3,
    ),
]


@pytest.mark.parametrize(("name", "tamper", "seq"), cases(RETOLD))
def test_a_log_that_tells_another_story_is_read_and_replay_names_where(
    cli: Cli, folder: Path, recorded: Lines, name: str, tamper: Tamper, seq: int
) -> None:
    data = tamper(recorded)
    for reader in ("show", "export", "import", "render"):
        said, _ = read_with(cli, folder, data, reader)
        assert (said.code, said.lines) == (0, []), reader
    said, before = read_with(cli, folder, data, "replay")
    assert (said.code, said.line) == (4, f"replay diverged at event {seq}")
    assert snapshot(folder) == before


def flow_text(text: str) -> Tamper:
    def change(events: list[dict[str, Any]]) -> None:
        digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        events[0]["flow"].update(text=text, hash=digest)

    return edited(change)


def test_tokens_past_any_column_are_read_and_replayed_as_recorded(
    cli: Cli, folder: Path, recorded: Lines
) -> None:
    # Usage is part of the model's recorded answer: readers keep it (the store clamps its
    # cached total), and a replay gives the answer back as it was recorded.
    data = edited(lambda e: e[2].__setitem__("usage", {"prompt_tokens": 10**30}))(recorded)
    for reader in ("show", "export", "import", "render", "replay"):
        said, _ = read_with(cli, folder, data, reader)
        assert said.code == 0, (reader, said.err)
    assert said.out.startswith("identical: ")


BROKEN_FLOWS = [
    (
        "invalid YAML",
        flow_text("roost: 1\nname: [unclosed\n"),
        "chat.yaml:3:1: error: invalid YAML: the '[' at line 2 is not closed: "
        "a ',' or ']' is missing",
    ),
    (
        "no such provider",
        flow_text(FLOW.replace("provider: p}", "provider: nowhere}")),
        "chat.yaml:7:28: error: no provider named 'nowhere' under providers",
    ),
    (
        "NUL in the text",
        flow_text(FLOW + "\x00"),
        "chat.yaml:9:1: error: binary file (NUL byte): a flow is UTF-8 text",
    ),
]


@pytest.mark.parametrize(("name", "tamper", "problem"), cases(BROKEN_FLOWS))
def test_a_recorded_flow_that_does_not_validate_stops_whoever_would_run_it(
    cli: Cli, folder: Path, recorded: Lines, name: str, tamper: Tamper, problem: str
) -> None:
    data = tamper(recorded)
    for reader in ("continue", "retry", "replay", "fork"):
        said, before = read_with(cli, folder, data, reader)
        assert said.code == 2, reader
        assert said.line.startswith(problem), said.line
        assert snapshot(folder) == before
    for reader in ("show", "export", "import", "render"):  # reading it runs nothing
        said, _ = read_with(cli, folder, data, reader)
        assert (said.code, said.lines) == (0, []), reader


# ------------------------------------------------------------------ a tampered database


@pytest.fixture
def forked(cli: Cli, folder: Path) -> tuple[str, str]:
    """A run paused at its interrupt and a fork of it, in the default store: their ids."""
    started = cli("run", "chat.yaml", "--no-input")
    assert started.code == 0, started.err
    parent = started.out.split()[1]
    forked = cli("fork", parent, "--at", "2", "--no-input")
    assert forked.code == 0, forked.err
    return parent, forked.out.split()[1].removesuffix(":")


def tamper_store(sql: str, *params: object) -> None:
    with sqlite3.connect(".roost/roost.db") as conn:
        conn.execute(sql, params)


STORED_READERS: dict[str, tuple[str, ...]] = {
    "show": ("show",),
    "export": ("export",),
    "continue": ("continue", "--answer", "x", "--no-input"),
    "retry": ("retry",),
    "replay": ("replay",),
    "fork": ("fork", "--at", "1", "--no-input"),
    "render": ("render", "chat.yaml", "-o", "run.html", "--run"),
}


def stored_read(cli: Cli, reader: str, run_id: str) -> Said:
    command, *options = STORED_READERS[reader]
    if command == "render":
        return cli(command, *options, run_id)
    return cli(command, run_id, *options)


def in_a_process(folder: Path, reader: str, run_id: str) -> Said:
    """``stored_read`` in a child process, so that a reader that never ends fails the test
    (at run_cli's timeout) instead of hanging the suite."""
    command, *options = STORED_READERS[reader]
    args = (*options, run_id) if command == "render" else (run_id, *options)
    done = run_cli(command, *args, cwd=folder)
    return Said(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("reader", list(STORED_READERS))
def test_a_fork_that_is_its_own_ancestor_is_one_line(
    cli: Cli, folder: Path, forked: tuple[str, str], reader: str
) -> None:
    _, fork = forked
    tamper_store("UPDATE runs SET parent = id WHERE id = ?", fork)
    before = snapshot(folder)
    said = in_a_process(folder, reader, fork)
    assert said.code == 2
    assert said.line == f"run {fork}: the runs it was forked from loop back to run {fork}"
    assert snapshot(folder) == before


def test_two_runs_forked_from_each_other_are_one_line(
    cli: Cli, folder: Path, forked: tuple[str, str]
) -> None:
    parent, fork = forked
    tamper_store("UPDATE runs SET parent = ?, fork_at = 1 WHERE id = ?", fork, parent)
    for run_id in (parent, fork):
        said = in_a_process(folder, "show", run_id)
        assert said.code == 2
        assert said.line == f"run {run_id}: the runs it was forked from loop back to run {run_id}"
    assert cli("runs").code == 0  # the list itself reads no events


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("UPDATE runs SET parent = 'nobody' WHERE id = ?", "stored event 2: event seq 2 where 0"),
        ("UPDATE runs SET fork_at = -3 WHERE id = ?", "stored event 2: event seq 2 where 0 was"),
        ("UPDATE runs SET fork_at = NULL WHERE id = ?", "stored event 2: event seq 2 where 0"),
    ],
    ids=["missing parent", "negative fork point", "no fork point"],
)
def test_a_fork_whose_origin_was_edited_is_refused(
    cli: Cli, folder: Path, forked: tuple[str, str], sql: str, problem: str
) -> None:
    _, fork = forked
    tamper_store(sql, fork)
    before = snapshot(folder)
    for reader in STORED_READERS:
        said = stored_read(cli, reader, fork)
        assert said.code == 2, reader
        assert said.line.startswith(f"run {fork}: {problem}"), said.line
    assert snapshot(folder) == before


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE runs SET next_seq = 2 WHERE id = ?",
        "UPDATE runs SET next_seq = 100 WHERE id = ?",
    ],
    ids=["behind", "ahead"],
)
def test_a_summary_row_whose_end_was_edited_stops_appends(
    cli: Cli, folder: Path, forked: tuple[str, str], sql: str
) -> None:
    parent, _ = forked
    tamper_store(sql, parent)
    events = cli("export", parent).out
    said = cli("continue", parent, "--answer", "x", "--no-input")
    assert said.code == 2
    assert said.line == (
        f"run {parent}: event 5 was already written; another process is advancing this run"
    )
    assert cli("export", parent).out == events


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE runs SET status = 'terminated' WHERE id = ?",
        "UPDATE runs SET flow_text = 'roost: [' WHERE id = ?",
        "UPDATE events SET type = 'terminate' WHERE run = ? AND seq = 3",
    ],
    ids=["status", "flow text", "type column"],
)
def test_the_cached_columns_are_never_believed_over_the_events(
    cli: Cli, folder: Path, forked: tuple[str, str], sql: str
) -> None:
    parent, _ = forked
    tamper_store(sql, parent)
    shown = cli("show", parent)
    assert shown.code == 0 and "paused: bot waits for USER" in shown.out
    continued = cli("continue", parent, "--answer", "go on", "--no-input")
    assert continued.code == 0, continued.err
    assert "bot → USER: two" in continued.out
    assert cli("replay", parent).out.startswith("identical")


def test_a_stored_payload_with_a_lone_surrogate_is_one_line(
    cli: Cli, folder: Path, forked: tuple[str, str]
) -> None:
    parent, _ = forked
    payload = '{"type": "message", "from": "bot", "to": "USER", "content": "o\\udc00ne"}'
    tamper_store("UPDATE events SET payload = ? WHERE run = ? AND seq = 3", payload, parent)
    for reader in STORED_READERS:
        said = stored_read(cli, reader, parent)
        assert said.code == 2, reader
        assert said.line.startswith(f"run {parent}: stored event 3: its payload is not JSON (")
