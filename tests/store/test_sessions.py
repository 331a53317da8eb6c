"""Sessions as people use them: ``roost chat`` resuming runs, archiving, deleting, dumping,
listing MCP tools, stopping a step; ``roost runs --all`` and ``--prune``."""

from __future__ import annotations

import io
import json
import pathlib
import shutil
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from fakes.llm_server import FakeLLMServer, Received
from fakes.script import Action, Broken, Reply
from sqlalchemy import create_engine, text

from roost.cli import main
from roost.engine.runner import CANCELLED
from roost.store.sql import SqlStore
from roost.store.urls import resolve_url
from tests.store.conftest import run_events

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TOOLS = pathlib.Path(__file__).parents[1] / "tools" / "data"

ASK = """\
roost: 1
name: ask
defaults: {provider: mock}
providers:
  mock: {kind: scripted, model: poet-1, replies: [four, five, six, seven, TERMINATE]}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: b}
start: {from: USER, to: bot, content: "2 + 2?"}
"""

LIVE = """\
roost: 1
name: live
providers:
  llm:
    kind: openai
    model: fake-chat
    base_url: ${FAKE_LLM_URL}/v1
    api_key: sk-fake-key
    timeout: 120
    max_retries: 0
defaults: {provider: llm}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: hi}
"""


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


Roost = Callable[..., Result]


@pytest.fixture
def roost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """Runs the command line in a fresh folder; ``stdin`` is text or a stream to read."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "ask.yaml").write_text(ASK)

    def invoke(*args: str, stdin: Any = "") -> Result:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin) if isinstance(stdin, str) else stdin)
        code = 0
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def run_id_in(said: str) -> str:
    """The id of the run a chat's first line names (``run ID of ...`` or ``resumed run ID``)."""
    first = said.splitlines()[0].split()
    return first[first.index("run") + 1]


def listed(roost: Roost, *options: str) -> list[str]:
    """The ids ``roost runs`` lists."""
    out = roost("runs", *options).out
    return [line.split()[0] for line in out.splitlines()[1:] if line.strip()]


# --------------------------------------------------------------------------- resuming


def test_chat_resumes_the_paused_run_active_last_unless_new(roost: Roost) -> None:
    first = run_id_in(roost("chat", "ask.yaml", stdin="2 + 2?\n").out)
    second = run_id_in(roost("chat", "ask.yaml", "--new", stdin="3 + 3?\n").out)
    assert first != second
    # The second run is the newer one, but the first is the one spoken to last.
    assert roost("continue", first, "--answer", "and 5 + 5?").code == 0

    again = roost("chat", "ask.yaml", stdin="/show\n")
    line = again.out.splitlines()[0]
    assert line.startswith(f"resumed run {first} of ask (paused, 4 messages, last active ")
    assert "/new starts a new one" in line
    assert "USER → bot: and 5 + 5?" in again.out  # /show shows the run it resumed

    fresh = roost("chat", "ask.yaml", "--new", stdin="")
    assert "(new: the first line you type starts it)" in fresh.out.splitlines()[0]
    assert run_id_in(fresh.out) not in (first, second)


def test_chat_starts_a_new_run_when_no_run_is_paused(roost: Roost) -> None:
    roost("run", "ask.yaml", "--answer", "", "--answer", "", "--answer", "", "--answer", "")
    said = roost("chat", "ask.yaml", stdin="").out.splitlines()[0]
    assert said.endswith("(new: the first line you type starts it)")  # the run has ended


def test_chat_resumes_no_archived_run_and_says_when_the_file_changed(
    roost: Roost, tmp_path: Path
) -> None:
    kept = run_id_in(roost("chat", "ask.yaml", stdin="hello\n").out)
    # Active last, but archived: never resumed.
    archived = run_id_in(roost("chat", "ask.yaml", "--new", stdin="again\n/archive\n").out)
    (tmp_path / "ask.yaml").write_text(ASK.replace("role: b", "role: a better bot"))
    line = roost("chat", "ask.yaml", stdin="").out.splitlines()[0]
    assert line.startswith(f"resumed run {kept} ") and archived not in line
    assert "it goes on as it was recorded, not as ask.yaml is now" in line


# --------------------------------------------------------------------------- archive, delete


def test_archive_hides_a_run_from_runs_until_all_and_unarchive_brings_it_back(roost: Roost) -> None:
    chatted = roost("chat", "ask.yaml", stdin="hello\n/archive\n/runs\n")
    run_id = run_id_in(chatted.out)
    assert f"run {run_id} is archived" in chatted.out
    assert "and 1 archived (roost runs --all lists them)" in chatted.out  # /runs hides it
    assert "(new: the first line you type starts it)" in chatted.out  # a new run follows

    shown = roost("runs")
    assert run_id not in shown.out and "1 archived run not listed" in shown.err
    everything = roost("runs", "--all").out
    assert f"{run_id}  ask (archived)" in everything
    shown = roost("show", run_id).out
    assert "USER → bot: hello" in shown and ", archived 20" in shown  # archived, not gone

    back = roost("chat", "ask.yaml", stdin=f"/switch {run_id}\n/unarchive\n/unarchive\n")
    assert f"run {run_id} is out of the archive" in back.out
    assert f"run {run_id} is not archived" in back.out
    assert run_id in listed(roost)


def test_delete_asks_first_and_takes_the_forks_with_the_run(roost: Roost) -> None:
    run_id = run_id_in(roost("chat", "ask.yaml", stdin="hello\n").out)
    forked = roost("fork", run_id, "--at", "5", "--no-input")
    fork_id = forked.out.split()[1].rstrip(":")

    refused = roost("chat", "ask.yaml", stdin=f"/switch {run_id}\n/delete\nno\n")
    question = f"delete run {run_id} (2 messages) and its events, with the 1 runs that branch"
    assert question in refused.out and f"({fork_id})? This cannot be undone. [y/N]" in refused.out
    assert "nothing deleted" in refused.out
    assert {run_id, fork_id} <= set(listed(roost))

    unanswered = roost("chat", "ask.yaml", stdin=f"/switch {run_id}\n/delete\n")
    assert "nothing deleted" in unanswered.out  # the end of input is no yes

    deleted = roost("chat", "ask.yaml", stdin=f"/switch {run_id}\n/delete\ny\n")
    assert "deleted 2 runs (" in deleted.out
    assert run_id not in listed(roost, "--all") and fork_id not in listed(roost, "--all")
    gone = roost("export", fork_id)
    assert gone.code == 2 and f"no run {fork_id!r}" in gone.err


def test_a_run_not_stored_yet_or_only_in_a_file_is_neither_archived_nor_deleted(
    roost, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    unstored = roost("chat", "ask.yaml", "--new", stdin="/archive\n/delete\n")
    assert unstored.out.count("this run has no message yet: it is not stored") == 2
    run_id = run_id_in(roost("chat", "ask.yaml", stdin="hello\n").out)
    (tmp_path / "run.jsonl").write_text(roost("export", run_id).out)
    filed = roost("chat", "ask.yaml", "--db", "other.db", stdin="/switch run.jsonl\n/archive\n")
    assert f"run {run_id} lives only in run.jsonl: only stored runs are archived" in filed.out

    roost("run", "ask.yaml", "--events", "both.jsonl", "--no-input")
    both = roost("chat", "ask.yaml", stdin="/switch both.jsonl\n/archive\n")
    assert "is archived (both.jsonl is left as it is)" in both.out
    assert (tmp_path / "both.jsonl").read_text().count("\n") == 5  # the file, as it was


# --------------------------------------------------------------------------- info, dump, mcp


def test_info_shows_tokens_cost_models_and_context(roost: Roost) -> None:
    info = roost("chat", "ask.yaml", stdin="/info\nhello\n/info\n").out
    before, after = info.split("USER → bot: hello" if "USER → bot: hello" in info else "bot: four")
    assert "model: bot: poet-1 (provider mock)" in before  # the provider's setting
    assert "context: no agent has spoken yet" in before
    assert "prompt tokens, 0 completion tokens, cost $0.00" in after
    assert "model: bot: poet-1 (provider mock)" in after
    assert "context: bot → USER: ~" in after and "of 128,000 tokens" in after


def test_info_names_the_model_the_server_reported(
    roost, tmp_path: Path, fake: FakeLLMServer
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "live.yaml").write_text(LIVE)
    fake.script(Reply(text="Hello!", model="fake-chat-2026-11"))
    info = roost("chat", "live.yaml", stdin="hi\n/info\n").out
    assert "model: bot: fake-chat-2026-11 (provider llm)" in info
    assert "usage: 1 calls, 12 prompt tokens, 7 completion tokens, cost " in info


def test_dump_writes_the_transcript_as_markdown(roost: Roost, tmp_path: Path) -> None:
    chatted = roost(
        "chat", "ask.yaml", stdin="hello *you*\n/rename my `sums`\n/dump\n/dump talk.md\n"
    )
    run_id = run_id_in(chatted.out)
    assert f"wrote run {run_id} to {run_id}.md" in chatted.out
    assert f"wrote run {run_id} to talk.md" in chatted.out
    written = (tmp_path / "talk.md").read_text()
    assert written == (tmp_path / f"{run_id}.md").read_text()
    assert written.startswith("# ask — my \\`sums\\`\n\nRun `" + run_id + "` of `ask.yaml`")
    assert "**USER → bot**\n\nhello *you*\n\n**bot → USER**\n\nfour" in written
    assert "*bot waits for USER.*" in written
    assert "1 model calls, 0 prompt tokens" in written


def test_dump_refuses_a_folder_or_a_place_it_cannot_write_in_one_line(
    roost, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "folder").mkdir()
    chatted = roost("chat", "ask.yaml", stdin="/dump\nhello\n/dump folder\n/dump no/such/x.md\n")
    assert "this run has no message yet: nothing to write" in chatted.out
    assert "/dump folder: is a folder; give a file name" in chatted.out
    assert "/dump no/such/x.md: cannot write: No such file or directory" in chatted.out
    assert "Traceback" not in chatted.out + chatted.err


def test_mcp_lists_the_servers_and_their_tools(roost: Roost, tmp_path: Path) -> None:
    for name in ("mcp_stdio_server.py", "mcp_crash_server.py"):
        shutil.copy(TOOLS / name, tmp_path / name)
    servers = {
        "calc": {"command": sys.executable, "args": ["mcp_stdio_server.py"]},
        "broken": {"command": sys.executable, "args": ["mcp_crash_server.py"], "timeout": 20},
    }
    flow = ASK.replace("agents:", f"mcp_servers: {json.dumps(servers)}\nagents:")
    (tmp_path / "tools.yaml").write_text(flow)
    shown = roost("chat", "tools.yaml", stdin="/mcp\n").out
    lines = shown.splitlines()
    calc = lines.index(f"USER → bot> calc ({sys.executable}): 5 tools")
    assert lines[calc + 1 : calc + 3] == [
        "  calc#add: Add two integers on the server.",
        "  calc#greet: Greet someone.",
    ]
    assert lines[calc + 6].startswith("MCP server 'broken' (") and "failed to start" in shown
    assert "this flow has no MCP servers" in roost("chat", "ask.yaml", stdin="/mcp\n").out


# --------------------------------------------------------------------------- stop


class GatedInput:
    """Lines to read, the ones after ``gate`` given only once ``opened`` is set."""

    def __init__(self, lines: list[str], gate: int, opened: threading.Event) -> None:
        self.lines, self.gate, self.opened = lines, gate, opened
        self.given = 0

    def readline(self) -> str:
        if self.given == self.gate:
            assert self.opened.wait(60), "the step never reached the model"
        if self.given >= len(self.lines):
            return ""
        self.given += 1
        return self.lines[self.given - 1] + "\n"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        monkeypatch.setenv("FAKE_LLM_URL", server.url)
        yield server


def test_stop_cancels_a_reply_in_progress_and_the_chat_goes_on(
    roost, tmp_path: Path, fake: FakeLLMServer
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "live.yaml").write_text(LIVE)
    streaming = threading.Event()

    def respond(received: Received) -> Action:
        if len(fake.requests) == 1:  # the first answer stalls after its first words
            streaming.set()
            return Broken(Reply(text="Let me think about this for a long while"), after=2,
                          how="stall", seconds=60)  # fmt: skip
        return Reply(text="Short answer.")

    fake.responder = respond
    lines = ["tell me everything", "/stop", "/info", "/retry", "thanks", "/quit"]
    chatted = roost("chat", "live.yaml", stdin=GatedInput(lines, gate=1, opened=streaming))
    assert chatted.code == 0, chatted.err
    run_id = run_id_in(chatted.out)
    assert f"error at bot: {CANCELLED}" in chatted.out
    assert "stopped: the run is kept; /retry asks again, /fork 1 goes back to before" in chatted.out
    assert f"run {run_id} of live (error)" in chatted.out  # /info, after the stop
    assert "Short answer." in chatted.out  # /retry asked again, and the chat went on
    events = [json.loads(line) for line in roost("export", run_id).out.splitlines()]
    kinds = [event["type"] for event in events]
    assert kinds[:4] == ["run_start", "message", "error", "retry"]  # the stopped call: no record
    said = [e["content"] for e in events if e["type"] == "message"]
    assert said == ["tell me everything", "Short answer.", "thanks", "Short answer."]
    replayed = roost("replay", run_id)
    assert replayed.code == 0, replayed.out


def test_stop_with_no_step_running_says_so(roost: Roost) -> None:
    said = roost("chat", "ask.yaml", stdin="/stop\n").out
    assert "no step is running: /stop (or Ctrl-C) stops one while it runs" in said


# --------------------------------------------------------------------------- prune


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def last_active(db: str, run_id: str, when: str) -> None:
    """Sets when the run was last active, as if its last step had been then."""
    engine = create_engine(resolve_url(db))
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE runs SET updated = :when WHERE id = :id"), {"when": when, "id": run_id}
        )
    engine.dispose()


def test_prune_deletes_old_archived_runs_after_asking(roost: Roost, db: str) -> None:
    ids = [
        run_id_in(roost("chat", "ask.yaml", "--new", "--db", db, stdin="hi\n").out)
        for _ in range(4)
    ]
    old, recent, kept_out, fork_parent = ids
    forked = roost("fork", fork_parent, "--at", "5", "--no-input", "--db", db)
    fork_id = forked.out.split()[1].rstrip(":")
    for run_id in (old, recent, fork_parent):
        roost("chat", "ask.yaml", "--db", db, stdin=f"/switch {run_id}\n/archive\n")
    for run_id in (old, kept_out, fork_parent):
        last_active(db, run_id, "2026-01-01T00:00:00.000001Z")

    asked = roost("runs", "--prune", "2026-06-01", "--db", db, stdin="n\n")
    assert asked.code == 0 and "nothing deleted" in asked.out
    assert f"  {old}  ask  paused, 2 messages, last active 2026-01-01" in asked.out
    assert recent not in asked.out and kept_out not in asked.out  # recent; not archived
    assert f"kept {fork_parent}: run {fork_id} branches off it and stays" in asked.out
    assert "delete 1 run and their events? This cannot be undone. [y/N]" in asked.err
    assert old in listed(roost, "--all", "--db", db)

    silent = roost("runs", "--prune", "2026-06-01", "--db", db, stdin="")
    assert silent.code == 2 and "no answer to the question: nothing deleted" in silent.err

    done = roost("runs", "--prune", "2026-06-01", "--db", db, stdin="y\n")
    assert done.code == 0 and "deleted 1 run (" in done.out
    left = listed(roost, "--all", "--db", db)
    assert old not in left and {recent, kept_out, fork_parent, fork_id} <= set(left)
    assert roost("export", fork_id, "--db", db).code == 0  # the fork still reads its parent

    roost("chat", "ask.yaml", "--db", db, stdin=f"/switch {fork_id}\n/archive\n")
    last_active(db, fork_id, "2026-01-01T00:00:00Z")
    both = roost("runs", "--prune", "2026-06-01", "--yes", "--db", db)
    assert both.code == 0 and "deleted 2 runs (" in both.out and "[y/N]" not in both.err
    assert set(listed(roost, "--all", "--db", db)) == {recent, kept_out}


def test_prune_takes_days_one_flow_and_refuses_what_is_no_date(
    roost: Roost, tmp_path: Path
) -> None:
    run_id = run_id_in(roost("chat", "ask.yaml", stdin="hi\n/archive\n").out)
    (tmp_path / "other.yaml").write_text(ASK.replace("name: ask", "name: other"))
    other = run_id_in(roost("chat", "other.yaml", stdin="hi\n/archive\n").out)
    nothing = roost("runs", "--prune", "30d")
    assert "no archived run was last active before" in nothing.out and nothing.code == 0
    one_flow = roost("runs", "--prune", "2999-01-01", "--flow", "other", "--yes")
    assert f"  {other}  other" in one_flow.out and run_id not in one_flow.out
    assert listed(roost, "--all") == [run_id]
    everything = roost("runs", "--prune", "2999-01-01", "--yes")
    assert f"  {run_id}  ask" in everything.out and "deleted 1 run" in everything.out
    bad = roost("runs", "--prune", "last week")
    assert bad.code == 2 and bad.err.count("\n") == 1
    assert "--prune 'last week': give a date (2026-11-01)" in bad.err
    alone = roost("runs", "--yes")
    assert alone.code == 2 and "--yes answers --prune's question" in alone.err
    mixed = roost("runs", "--prune", "30d", "--status", "paused")
    assert mixed.code == 2 and "--prune takes --flow, --yes and --db, not --status" in mixed.err


def test_the_store_refuses_to_delete_a_parent_without_its_fork(db: str) -> None:
    store = SqlStore(db)
    store.new_log("parent").append(run_events("parent", 4))
    fork = store.fork("parent", 2, "child")
    fork.materialize()
    with pytest.raises(Exception, match="run child branches off run parent"):
        store.delete(["parent"])
    assert [event.seq for event in store.log("child").load()] == [0, 1]
    assert store.delete(["parent", "child"]) == 4
    assert store.runs() == []
    store.close()
