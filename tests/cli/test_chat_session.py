"""``roost chat``'s sessions as people use them: the run it resumes, archiving, deleting,
what /info and /mcp say, stopping a step."""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
import threading
from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer, Received
from fakes.script import Action, Broken, Reply

from roost.engine.runner import CANCELLED
from tests.fakes.chat_sessions import ASK, LIVE, Roost, command_line, listed, run_id_in
from tests.fakes.terminal import Terminal

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def roost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """The command line in a fresh folder holding ask.yaml (tests/fakes/chat_sessions.py)."""
    return command_line(tmp_path, monkeypatch, capsys)


TIDES = """\
roost: 1
name: tides
defaults: {provider: talk, max_rounds: 6}
providers:
  talk:
    kind: scripted
    context_window: 100
    when_exhausted: cycle
    replies:
      - The tide comes in twice a day, pulled by the moon and a little by the sun.
      - And it goes out twice a day, leaving pools where crabs and small fish wait.
      - In short, the tides.
agents:
  a: {role: You are a.}
  b: {role: You are b.}
start: {from: a, to: b, content: unused}
"""


def test_chat_info_gives_each_agents_context_against_its_window(tmp_path: Path) -> None:
    flow = tmp_path / "tides.yaml"
    flow.write_text(TIDES)
    chat = Terminal(["chat", str(flow)], tmp_path)
    try:
        chat.wait_for("a → b> ")
        chat.type("/info")
        chat.wait_for("no agent has spoken yet")
        chat.type("Tell me about the tides.")
        chat.wait_for("the run has ended")
        chat.type("/info")
        shown = chat.wait_for("of 100 tokens", times=2)
        chat.type("/quit")
        chat.wait_for("is stored")
    finally:
        chat.close()
    info = shown.split("the run has ended")[1]
    assert "usage: " in info and "cost $0.00" in info, info
    assert "context: a → b: ~" in info and "context: b → a: ~" in info, info


TOOLS = pathlib.Path(__file__).parents[1] / "tools" / "data"


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


# --------------------------------------------------------------------------- info, mcp


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
