"""Attacks on the run store: tampered logs and rows, numbers that do not fit.

Each test plays what an attacker (or an accident) can do to a run file or to
the database, and checks that roost answers with one line and writes nothing
it should not: never a traceback, never two runs spliced into one.
"""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.cli import main
from roost.errors import EventLogError
from roost.events import LlmCallEvent
from roost.store.checks import COLUMN_MAX
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore
from tests.postgres import fresh_database
from tests.store.conftest import pg_server, pg_url, run_events

__all__ = ["pg_server", "pg_url"]  # fixtures used by the tests below

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


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def line(self) -> str:
        """The one line of stderr (the test fails when there are more)."""
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        assert "Traceback" not in self.err
        return lines[0]


Roost = Callable[..., Result]


@pytest.fixture
def roost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """The command line in a fresh folder, with a flow that pauses after its first reply."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "chat.yaml").write_text(FLOW)

    def invoke(*args: str) -> Result:
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = 0
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def paused_run(roost: Roost, events: str = "run.jsonl") -> tuple[str, list[dict[str, Any]]]:
    """A run paused at its interrupt, stored and written to ``events``: its id and lines."""
    started = roost("run", "chat.yaml", "--no-input", "--events", events)
    assert started.code == 0, started.err
    lines = [json.loads(line) for line in Path(events).read_text().splitlines()]
    return lines[0]["run"], lines


def write_lines(path: str, lines: list[dict[str, Any]]) -> None:
    Path(path).write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty store of each kind."""
    if request.param == "sqlite":
        yield str(tmp_path / "attacked.db")
    else:
        yield request.getfixturevalue("pg_url")


def tamper(url: str, sql: str, *params: object) -> None:
    """Runs ``sql`` on the store's database behind roost's back (``?`` marks parameters)."""
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
        return
    with sqlite3.connect(url) as conn:
        conn.execute(sql, params)


# ------------------------------------------------------------------ a log is one run


def test_a_second_run_start_in_a_file_is_refused_by_every_command(roost: Roost) -> None:
    _, lines = paused_run(roost)
    lines[3] = {**lines[0], "seq": 3}  # a run_start where a message was: two runs in one
    write_lines("spliced.jsonl", lines)
    expected = "spliced.jsonl:4: a second run_start at seq 3: a log holds one run"
    for command in (
        ["show", "spliced.jsonl"],
        ["continue", "spliced.jsonl", "--answer", "go on"],
        ["import", "spliced.jsonl", "--db", "other.db"],
        ["export", "spliced.jsonl"],
    ):
        result = roost(*command)
        assert result.code == 2, command
        assert result.line.endswith(expected), command
    assert "no runs stored" in roost("runs", "--db", "other.db").out
    assert len(Path("spliced.jsonl").read_text().splitlines()) == len(lines)


def test_a_second_run_start_in_the_store_is_refused(store_url: str) -> None:
    store = SqlStore(store_url)
    events = run_events("r1", 4)
    store.new_log("r1").append(events)
    start = store.log("r1").load()[0]
    payload = start.model_dump_json(by_alias=True, exclude={"seq", "run", "ts"})
    tamper(store_url, "UPDATE events SET payload = ? WHERE run = ? AND seq = 2", payload, "r1")
    with pytest.raises(EventLogError) as caught:
        store.log("r1").load()
    assert str(caught.value) == (
        "run r1: stored event 2: a second run_start at seq 2: a log holds one run"
    )
    store.close()


def test_a_gap_in_the_stored_seqs_is_refused(store_url: str) -> None:
    store = SqlStore(store_url)
    store.new_log("r1").append(run_events("r1", 4))
    tamper(store_url, "DELETE FROM events WHERE run = ? AND seq = 1", "r1")
    with pytest.raises(EventLogError, match=r"^run r1: stored event 2: event seq 2 where 1 was"):
        store.log("r1").load()
    store.close()


def test_the_store_takes_no_event_of_another_run_and_no_second_run_start(
    store_url: str,
) -> None:
    store = SqlStore(store_url)
    log = store.new_log("r1")
    log.append(run_events("r1", 2))
    with pytest.raises(EventLogError, match="event of run 'r2' in the log of run 'r1'"):
        log.append(run_events("r2", 3)[2:])
    restart = run_events("r1", 1)[0].model_copy(update={"seq": 2})
    with pytest.raises(EventLogError, match="a second run_start at seq 2"):
        log.append([restart])
    assert len(store.log("r1").load()) == 2
    store.close()


# ------------------------------------------------------------------ damaged rows


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ('{"type": "message", "from": "a"', "its payload is not JSON"),
        ("[1, 2]", "its payload is not a JSON object"),
        ('{"type": "message", "from": "a", "to": "b"}', "invalid event: message.content: Field"),
        ('{"type": "gossip"}', "event type 'gossip' is unknown to this version of roost"),
    ],
)
def test_a_damaged_payload_is_one_line_naming_run_and_seq(
    roost: Roost, payload: str, problem: str
) -> None:
    run_id, _ = paused_run(roost)
    tamper(".roost/roost.db", "UPDATE events SET payload = ? WHERE seq = 2", payload)
    for command in (["show", run_id], ["export", run_id], ["continue", run_id, "--answer", "x"]):
        result = roost(*command)
        assert result.code == 2, command
        assert result.line.startswith(f"run {run_id}: stored event 2: {problem}"), result.line


def test_a_payload_cannot_smuggle_in_events_or_change_its_seq(store_url: str) -> None:
    store = SqlStore(store_url)
    store.new_log("r1").append(run_events("r1", 3))
    own = '{"type": "message", "from": "a", "to": "b", "content": "m1", "seq": 7, "run": "x"}'
    tamper(store_url, "UPDATE events SET payload = ? WHERE seq = 1", own)
    loaded = store.log("r1").load()
    assert [(e.seq, e.run) for e in loaded] == [(0, "r1"), (1, "r1"), (2, "r1")]
    smuggled = (
        '{"type": "message", "from": "a", "to": "b", "content": "m1"},'
        '{"seq": 2, "run": "r1", "ts": "t", "type": "message", "from": "a", "to": "b", '
        '"content": "injected"}'
    )
    tamper(store_url, "UPDATE events SET payload = ? WHERE seq = 1", smuggled)
    with pytest.raises(EventLogError, match=r"^run r1: stored event 1: its payload is not JSON"):
        store.log("r1").load()
    store.close()


# ------------------------------------------------------------------ numbers that do not fit


def _usage_event(run: str, seq: int, usage: dict[str, int]) -> LlmCallEvent:
    return LlmCallEvent(
        seq=seq, run=run, ts="2026-01-01T00:00:01Z", node="bot", provider="p", model="m",
        request_digest="sha256:0", response={"text": "hi"}, usage=usage,
    )  # fmt: skip


def test_huge_token_counts_are_clamped_in_the_summary_and_kept_in_the_events(
    store_url: str,
) -> None:
    store = SqlStore(store_url)
    log = store.new_log("r1")
    log.append(run_events("r1", 1))
    log.append([_usage_event("r1", 1, {"prompt_tokens": 10**20, "completion_tokens": 5})])
    log.append([_usage_event("r1", 2, {"prompt_tokens": COLUMN_MAX, "completion_tokens": 9})])
    log.append([_usage_event("r1", 3, {"prompt_tokens": -(10**30)})])
    assert store.run("r1").tokens == COLUMN_MAX
    loaded = store.log("r1").load()
    kept = [(e.usage.prompt_tokens, e.usage.completion_tokens) for e in loaded[1:]]  # type: ignore[union-attr]
    assert kept == [(10**20, 5), (COLUMN_MAX, 9), (-(10**30), 0)]
    store.close()


def test_a_sum_of_tokens_past_the_column_stops_at_its_end(store_url: str) -> None:
    store = SqlStore(store_url)
    log = store.new_log("r1")
    log.append(run_events("r1", 1))
    for seq in (1, 2, 3):
        log.append([_usage_event("r1", seq, {"prompt_tokens": COLUMN_MAX // 2})])
    assert store.run("r1").tokens == COLUMN_MAX
    store.close()


@pytest.mark.parametrize("seq", [10**20, 2**63, COLUMN_MAX, -1])
def test_a_seq_the_store_cannot_hold_is_refused_in_one_line(store_url: str, seq: int) -> None:
    store = SqlStore(store_url)
    log = store.new_log("r1")
    log.append(run_events("r1", 1))
    event = run_events("r1", 2)[1].model_copy(update={"seq": seq})
    with pytest.raises(EventLogError) as caught:
        log.append([event])
    assert str(caught.value) == (
        f"run r1: event seq {seq} is outside what the store holds (0 to {COLUMN_MAX - 1})"
    )
    assert store.run("r1").next_seq == 1
    store.close()


def test_importing_a_run_that_reports_10_20_tokens_stores_it(roost: Roost) -> None:
    run_id, lines = paused_run(roost)
    for line in lines:
        if line["type"] == "llm_call":
            line["usage"] = {"prompt_tokens": 10**20, "completion_tokens": 10**25}
    write_lines("huge.jsonl", lines)
    imported = roost("import", "huge.jsonl", "--db", "other.db")
    assert imported.code == 0, imported.err
    assert f"note: run {run_id} reports token counts outside 0 to 2,147,483,647" in imported.out
    listed = roost("runs", "--db", "other.db").out.splitlines()
    assert next(line for line in listed if run_id in line).split()[4] == str(COLUMN_MAX)
    exported = roost("export", run_id, "--db", "other.db").out
    assert '"prompt_tokens":100000000000000000000' in exported
    assert "100000000000000000000 prompt tokens" in roost("show", run_id, "--db", "other.db").out


def test_a_huge_seq_in_a_file_is_one_line(roost: Roost) -> None:
    _, lines = paused_run(roost)
    lines[2]["seq"] = 10**20
    write_lines("seq.jsonl", lines)
    for command in (["show", "seq.jsonl"], ["import", "seq.jsonl", "--db", "other.db"]):
        result = roost(*command)
        assert result.code == 2
        assert "seq.jsonl:3: event seq 100000000000000000000 where 2 was" in result.line


# ------------------------------------------------------------------ an edited run file


def _stored(run_id: str) -> list[str]:
    store = SqlStore(".roost/roost.db", create=False)
    try:
        return [event.model_dump_json() for event in store.log(run_id).load()]
    finally:
        store.close()


def test_continuing_an_edited_file_leaves_the_stored_run_alone(roost: Roost) -> None:
    run_id, lines = paused_run(roost)
    before = _stored(run_id)
    lines[1]["content"] = "a start the run never had"  # same number of events, other history
    write_lines("run.jsonl", lines)
    continued = roost("continue", "run.jsonl", "--answer", "go on", "--no-input")
    assert continued.code == 0, continued.err
    assert _stored(run_id) == before
    assert continued.err.strip() == (
        f"roost: note: run.jsonl: the stored copy of run {run_id} differs from event 1 on "
        f"({len(lines)} events stored, {len(lines)} in the file); only the file is written"
    )
    grown = [json.loads(line) for line in Path("run.jsonl").read_text().splitlines()]
    assert len(grown) > len(lines) and grown[1]["content"] == "a start the run never had"


def test_forking_an_edited_file_stores_no_fork(roost: Roost) -> None:
    _, lines = paused_run(roost)
    lines[1]["content"] = "edited"
    write_lines("run.jsonl", lines)
    forked = roost("fork", "run.jsonl", "--at", "1", "--message", "again", "--no-input")
    assert forked.code == 0, forked.err
    assert "only the file is written" in forked.err
    assert roost("runs").out.count("chat") == 1  # the parent only: no fork grafted onto it


def test_an_unedited_file_still_advances_both_copies(roost: Roost) -> None:
    run_id, _ = paused_run(roost)
    before = _stored(run_id)
    continued = roost("continue", "run.jsonl", "--answer", "go on", "--no-input")
    assert continued.code == 0 and continued.err == ""
    in_file = [event.model_dump_json() for event in JsonlLog(Path("run.jsonl")).load()]
    assert in_file[-1] != before[-1] and _stored(run_id) == in_file


def test_a_file_whose_run_id_is_a_prefix_of_a_stored_one_is_not_that_run(roost: Roost) -> None:
    run_id, lines = paused_run(roost)
    before = _stored(run_id)
    for line in lines:
        line["run"] = run_id[:-2]  # another run, whose id a prefix lookup would match
    write_lines("other.jsonl", lines)
    continued = roost("continue", "other.jsonl", "--answer", "go on", "--no-input")
    assert continued.code == 0, continued.err
    assert _stored(run_id) == before


# ------------------------------------------------------------------ a password holding an '@'

AT_URL = "postgresql://roost:hunter@2secret@127.0.0.1:9/x"


def test_a_password_with_an_unencoded_at_never_shows(roost: Roost) -> None:
    for command in (["runs"], ["run", "chat.yaml", "--no-input"], ["show", "abc"]):
        result = roost(*command, "--db", AT_URL)
        assert result.code == 2, command
        assert result.line == (
            "invalid database URL 'postgresql+psycopg://roost:***@127.0.0.1:9/x': "
            "write an '@' in its password as %40"
        )
        assert "hunter" not in result.out + result.err and "2secret" not in result.err


def test_a_printed_hint_masks_up_to_the_last_at() -> None:
    from roost.store.sql import masked_db

    assert masked_db(AT_URL) == "postgresql://roost:***@127.0.0.1:9/x"
    assert masked_db("postgresql://a@b:p@s@s@h/x") == "postgresql://a@b:***@h/x"


def test_a_torn_line_cut_from_a_file_kept_with_the_store_is_reported(roost: Roost) -> None:
    run_id, lines = paused_run(roost)
    with Path("run.jsonl").open("a") as file:
        file.write('{"seq": 5, "run": "')  # a write cut short: the store never had it
    continued = roost("continue", "run.jsonl", "--answer", "go on", "--no-input")
    assert continued.code == 0, continued.err
    assert continued.err == "roost: warning: run.jsonl:6: ignored a torn last line " + (
        "(not JSON: Unterminated string starting at: line 1 column 19 (char 18))\n"
    )
    assert _stored(run_id)[len(lines) :]  # the stored copy went on with the file


def test_processes_opening_a_fresh_postgresql_store_at_once_all_open_it(
    pg_server: str, tmp_path: Path
) -> None:
    """Each of several processes makes the tables of a new store at the same moment:
    the ones that lose the race find the tables made instead of failing."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from roost.store.sql import SqlStore\n"
        "Path(sys.argv[2] + '.ready').write_text('ready')\n"
        "while not Path(sys.argv[3]).exists(): time.sleep(0.001)\n"
        "SqlStore(sys.argv[1]).close()\n"
        "print('opened')\n"
    )
    for attempt in range(2):
        url = fresh_database(pg_server)
        go = tmp_path / f"go-{attempt}"
        names = [str(tmp_path / f"p{attempt}-{n}") for n in range(4)]
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", script, url, name, str(go)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in names
        ]
        deadline = time.monotonic() + 120
        while not all(Path(name + ".ready").exists() for name in names):
            assert time.monotonic() < deadline, "the processes did not start"
            time.sleep(0.01)
        go.write_text("go")  # every process starts creating the tables now
        for process in processes:
            out, err = process.communicate(timeout=120)
            assert out.strip() == "opened", err
        store = SqlStore(url)
        assert store.runs() == []
        store.close()
