"""roost run and roost chat in a terminal: what a person sees, and the prompt they answer at."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer
from fakes.script import Broken, FakeCall, Reply

from tests.cli_inprocess import run_cli
from tests.engine.conftest import ASK

if TYPE_CHECKING:
    from collections.abc import Mapping

FLOWS = Path(__file__).parents[2] / "flows"
ADDER = Path(__file__).parents[1] / "providers" / "data"
# How long to wait for what a terminal should show; reached only when a test fails.
PATIENCE = float(os.environ.get("ROOST_TEST_PATIENCE", "240"))

CODE = "import sys; from roost.cli import main; main(sys.argv[1:])"


def read_until(fd: int, marker: str, timeout: float = 240.0) -> str:
    """Terminal output until ``marker`` appears (or the timeout)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    return seen


def spawn(
    args: list[str], cwd: Path, extra_env: Mapping[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm", **(extra_env or {})}
    process = subprocess.Popen(
        [sys.executable, "-c", CODE, *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    return process, master


def test_a_terminal_asks_names_who_waits_and_takes_the_answer(tmp_path: Path) -> None:
    flow = tmp_path / "ask.yaml"
    flow.write_text(ASK.replace("five, TERMINATE", "five, six, seven, TERMINATE"))
    events = tmp_path / "run.jsonl"
    process, master = spawn(["run", str(flow), "--events", str(events)], tmp_path)
    try:
        shown = read_until(master, "(/let")
        assert "bot waits for USER" in shown, shown
        assert "USER → bot> (/let: USER answers by itself" in plain(shown), shown
        os.write(master, b"thanks a lot\r")
        shown = read_until(master, "> ")
        os.write(master, b"\r")  # an empty line is no answer: it asks again
        shown += read_until(master, "> ")
        os.write(master, b"/let\r")  # the explicit command: USER answers by itself
        shown += read_until(master, "> ")
        process.send_signal(signal.SIGINT)  # Ctrl-C at the prompt
        shown += read_until(master, "continue with")
        assert process.wait(timeout=240) == 0, shown
    finally:
        process.kill()
        os.close(master)
    assert "Traceback" not in shown
    assert "an empty line is no answer: type one, or /let to let USER answer" in plain(shown)
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    said = [e["content"] for e in lines if e["type"] == "message"]
    assert said == ["2 + 2?", "four", "thanks a lot", "own words", "five", "six"], shown
    assert [e["feedback"] for e in lines if e["type"] == "resume"] == ["thanks a lot", ""]
    assert lines[-1]["type"] == "interrupt"  # left paused, resumable
    # What the person typed is on the screen once, at the prompt, not printed again.
    assert "USER → bot: thanks a lot" not in plain(shown), shown


def plain(shown: str) -> str:
    """Terminal output as a person reads it: no colour codes, no carriage returns."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "")


class Terminal:
    """A roost command in a pseudo-terminal, read as plain text."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.process, self.fd = spawn(args, cwd, env)
        self.raw = ""

    @property
    def text(self) -> str:
        return plain(self.raw)

    def wait_for(self, marker: str, times: int = 1, timeout: float = PATIENCE) -> str:
        """The plain output once ``marker`` has appeared ``times`` times (or the timeout)."""
        deadline = time.monotonic() + timeout
        while self.text.count(marker) < times and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    self.raw += os.read(self.fd, 4096).decode(errors="replace")
                except OSError:
                    break
        return self.text

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def finish(self) -> str:
        """Waits for the command to end; the plain output."""
        code = self.process.wait(timeout=PATIENCE)
        self.wait_for("\x00never\x00", timeout=1)  # what is left to read
        self.close()
        assert code in (0, 3), self.text
        return self.text

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.fd)


def chat_with(folder: Path, name: str, text: str) -> Terminal:
    """``roost chat`` in a terminal, on a flow file ``name`` holding ``text``."""
    flow = folder / name
    flow.write_text(text)
    return Terminal(["chat", str(flow)], folder)


def test_chat_ends_a_directors_turn_before_the_prompt_and_names_who_you_answer_as(
    tmp_path: Path,
) -> None:
    flow = tmp_path / "math-chat.yaml"
    shutil.copy(FLOWS / "math-chat.yaml", flow)
    chat = Terminal(["chat", str(flow)], tmp_path)
    try:
        shown = chat.wait_for("client → math> ")  # the first line is said as the flow's start
        assert "the first line you type starts it" in shown, shown
        chat.type("How much is 2 + 2?")
        shown = chat.wait_for("client → math> ", times=2)
        chat.type("/quit")
        shown = chat.wait_for("is stored")
    finally:
        chat.close()
    lines = shown.splitlines()
    # The director's answer is a line of its own, never text the prompt is glued to.
    assert "math picks client" in lines, shown
    waits = lines.index("math waits for client: answer as client")
    assert lines[waits - 1] == "math picks client", shown
    assert lines[waits + 1].startswith("client → math> /quit"), shown
    assert "math: client" not in shown and "math: mathematician" not in shown, shown
    assert "math picks mathematician" in lines and "math picks reviewer" in lines, shown


CHANNEL = """
roost: 1
name: desk
defaults: {provider: team}
providers:
  team: {kind: scripted, replies: [a first draft, looks fine, TERMINATE]}
  boss: {kind: scripted, replies: [nobody, still nobody]}
agents:
  USER: {role: the person}
  writer: {role: writes}
  checker: {role: checks}
channels:
  desk:
    members: [writer, checker]
    max_rounds: 2
    director: {strategy: llm, provider: boss, seed: 3}
start: {from: USER, to: desk, content: write it}
"""


def test_run_shows_each_pick_of_a_director_as_it_happens_and_says_when_it_fell_back(
    tmp_path: Path,
) -> None:
    flow = tmp_path / "desk.yaml"
    flow.write_text(CHANNEL)
    run = Terminal(["run", str(flow), "--no-input"], tmp_path)
    shown = run.finish()
    lines = shown.splitlines()
    picks = [line for line in lines if line.startswith("desk picks ")]
    assert len(picks) == 2, shown
    first, second = picks
    # Twice no candidate: the pick was drawn at random, and the line says so.
    assert re.fullmatch(r"desk picks (writer|checker) \(fallback: .*drawn at random\)", first)
    chosen = first.split()[2]
    other = "checker" if chosen == "writer" else "writer"
    assert second == f"desk picks {other} (the only candidate)", shown
    # Each pick is shown before the speaker's words, as it happens.
    assert lines.index(first) < lines.index(f"{chosen} → desk: a first draft"), shown
    assert lines.index(second) < lines.index(f"{other} → desk: looks fine"), shown


def test_text_a_model_writes_before_its_tool_calls_is_not_shown_as_its_reply(
    tmp_path: Path,
) -> None:
    for name in ("adder.yaml", "calc.py"):
        shutil.copy(ADDER / name, tmp_path / name)
    flow = tmp_path / "adder.yaml"
    flow.write_text(flow.read_text().replace("provider: PROVIDER", "provider: chat"))
    with FakeLLMServer() as server:
        server.script(
            Reply(text="Let me add that up.", calls=(FakeCall("add", {"a": 2, "b": 3}),)),
            Reply(text="2 + 3 = 5"),
        )
        env = {"FAKE_LLM_URL": server.url, "FAKE_LLM_KEY": "sk-fake-key"}
        run = Terminal(["run", str(flow), "--no-input"], tmp_path, env)
        shown = run.finish()
    lines = shown.splitlines()
    note = "adder: Let me add that up. (written before its tool calls: not a reply)"
    assert note in lines, shown
    assert lines[lines.index(note) + 1] == '  adder calls add({"a": 2, "b": 3})', shown
    assert "adder: 2 + 3 = 5" in lines, shown
    assert "adder → USER: Let me add" not in shown, shown


def test_chat_fork_at_1_is_a_new_run_that_the_next_line_starts(tmp_path: Path) -> None:
    flow = tmp_path / "ask.yaml"
    flow.write_text(ASK)
    chat = Terminal(["chat", str(flow)], tmp_path)
    try:
        chat.wait_for("USER → bot> ")
        chat.type("2 + 2?")
        chat.wait_for("USER → bot> ", times=2)
        chat.type("/fork 1")
        chat.wait_for("USER → bot> ", times=3)
        chat.type("/runs")
        chat.wait_for("USER → bot> ", times=4)
        chat.type("hello")
        chat.wait_for("USER → bot> ", times=5)
        chat.type("/quit")
        shown = chat.wait_for("is stored")
    finally:
        chat.close()
    assert "(new: the first line you type starts it)" in shown, shown
    listed = [line for line in shown.splitlines() if line.startswith("* ")]
    assert len(listed) == 1 and listed[0].split()[2] == "new", shown
    fork_id = listed[0].split()[1]
    assert "USER → bot> hello" in shown and "bot: four" in shown.split("/fork 1")[1], shown
    assert "USER → bot: hello" not in shown, shown  # the typed line is not echoed back
    stored = run_cli("show", fork_id, cwd=tmp_path)
    assert "paused: bot waits for USER" in stored.stdout, stored.stdout


def test_chat_fork_at_1_is_stored_as_new_not_running(tmp_path: Path) -> None:
    flow = tmp_path / "ask.yaml"
    flow.write_text(ASK)
    chat = Terminal(["chat", str(flow)], tmp_path)
    try:
        chat.wait_for("USER → bot> ")
        chat.type("2 + 2?")
        chat.wait_for("USER → bot> ", times=2)
        chat.type("/fork 1")
        shown = chat.wait_for("USER → bot> ", times=3)
        chat.type("/quit")
        shown = chat.wait_for("is stored")
    finally:
        chat.close()
    fork_id = shown.split("/fork 1")[1].split()[1]
    stored = run_cli("runs", cwd=tmp_path)
    row = next(line for line in stored.stdout.splitlines() if fork_id in line)
    assert "running" not in row and " new " in row, stored.stdout


def test_chat_help_lists_exactly_the_commands_there_are(tmp_path: Path) -> None:
    flow = tmp_path / "ask.yaml"
    flow.write_text(ASK)
    chat = Terminal(["chat", str(flow)], tmp_path)
    try:
        chat.wait_for("> ")
        chat.type("/help")
        shown = chat.wait_for("> ", times=2)
        listed = [line.split()[0] for line in shown.splitlines() if line.startswith("/")]
        for command in [*listed, "/nope"]:
            if command not in ("/quit", "/new"):
                chat.type(command)
        chat.type("/quit")
        shown = chat.wait_for("is stored")
    finally:
        chat.close()
    assert {"/stop", "/help", "/quit", "/dump", "/mcp", "/delete"} <= set(listed), shown
    assert shown.count("no command /") == 1 and "no command /nope" in shown, shown


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


PAUSING = """\
roost: 1
name: pausing
defaults: {provider: talk}
providers:
  talk: {kind: scripted, when_exhausted: cycle, replies: ["Noted, and the tide is out now."]}
agents:
  USER: {interrupt: ALWAYS}
  bot: {role: You help.}
start: {from: USER, to: bot, content: unused}
"""


def test_chat_compact_compresses_now_and_says_what_it_did(tmp_path: Path) -> None:
    flow = tmp_path / "pausing.yaml"
    flow.write_text(PAUSING)
    chat = Terminal(["chat", str(flow)], tmp_path)
    try:
        chat.wait_for("USER → bot> ")
        chat.type("/compact")
        chat.wait_for("USER → bot> ", times=2)
        for n, line in enumerate(("Hello.", "More, please.", "And then?", "Go on."), start=2):
            chat.type(line)
            chat.wait_for("> ", times=n + 1)
        chat.type("/compact")
        shown = chat.wait_for("compressed (summary")
        chat.type("/quit")
        chat.wait_for("is stored")
    finally:
        chat.close()
    assert "only a paused run, or one stopped at an error" in shown, shown  # before it began
    assert "⇲ bot's view of its talk with USER compressed (summary" in shown, shown
    run_id = shown.split("run ")[1].split()[0]
    replayed = run_cli("replay", run_id, cwd=tmp_path)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout


def test_chat_compact_that_would_not_shrink_a_view_is_not_made_and_says_so(
    tmp_path: Path,
) -> None:
    chat = chat_with(tmp_path, "pausing.yaml", PAUSING)
    try:
        chat.wait_for("USER → bot> ")
        for n, line in enumerate(("Hello.", "More."), start=2):
            chat.type(line)
            chat.wait_for("USER → bot> ", times=n)
        # The summary (the scripted reply, under its heading) is longer than the turns it
        # would replace: compressing would make the view bigger.
        chat.type("/compact")
        shown = chat.wait_for("nothing compressed")
        chat.type("/quit")
        chat.wait_for("is stored")
    finally:
        chat.close()
    assert "no agent's view would get shorter" in shown, shown
    assert "⇲" not in shown, shown
    run_id = shown.split("run ")[1].split()[0]
    exported = run_cli("export", run_id, cwd=tmp_path).stdout.splitlines()
    assert not [e for e in map(json.loads, exported) if e["type"] == "compact"], shown


LIVE = """
roost: 1
name: live
providers:
  llm:
    kind: openai
    model: fake-chat
    base_url: ${FAKE_LLM_URL}/v1
    api_key: sk-fake-key
    timeout: 300
    max_retries: 0
defaults: {provider: llm}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: hi}
"""


def test_ctrl_c_in_a_chat_stops_the_reply_in_progress_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    flow = tmp_path / "live.yaml"
    flow.write_text(LIVE)
    # Long enough to show before it stalls: the stream holds back as many characters as
    # the longest value read from the environment (it could be the start of one).
    long = Reply(text="Let me think about this for a long while, and then some more.")
    with FakeLLMServer() as server:
        server.script(Broken(long, after=12, how="stall", seconds=300), Reply(text="Short."))
        env = {**os.environ, "FAKE_LLM_URL": server.url}
        chat = Terminal(["chat", str(flow)], tmp_path, env)
        try:
            chat.wait_for("USER → bot> ")
            chat.type("tell me everything")
            chat.wait_for("bot: Let me")  # the reply is under way, and stalls there
            chat.process.send_signal(signal.SIGINT)
            chat.wait_for("stopped: the run is kept")
            chat.type("/retry")
            chat.wait_for("bot: Short.")
            chat.type("/quit")
            shown = chat.wait_for("is stored")
        finally:
            chat.close()
    assert "bot: Let me think about" in shown, shown
    assert "error at bot: cancelled: the step was stopped" in shown, shown
    run_id = shown.split("run ", 1)[1].split()[0]
    exported = run_cli("export", run_id, cwd=tmp_path, env=env).stdout.splitlines()
    said = [e["content"] for e in map(json.loads, exported) if e["type"] == "message"]
    assert said == ["tell me everything", "Short."], shown
    assert run_cli("replay", run_id, cwd=tmp_path, env=env).returncode == 0


APPROVALS = """
roost: 1
name: approvals
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: mean, arguments: {data: [2, 4, 9]}}]}
      - {tool_calls: [{name: mean, arguments: {data: [1, 3]}}]}
      - {tool_calls: [{name: mean, arguments: {data: [5]}}]}
      - done
      - TERMINATE
tools:
  mean: {python: "statistics:fmean", description: The mean., approval: always}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  helper: {role: You answer with your tools., functions: [mean]}
start: {from: USER, to: helper, content: "means, please"}
"""


def _results(tmp_path: Path, run_id: str) -> list[tuple[str, bool]]:
    exported = run_cli("export", run_id, cwd=tmp_path).stdout.splitlines()
    events = [json.loads(line) for line in exported]
    return [(e["content"], e["is_error"]) for e in events if e["type"] == "tool_result"]


def test_run_reads_y_as_yes_n_as_no_and_other_text_as_a_reason(tmp_path: Path) -> None:
    flow = tmp_path / "approvals.yaml"
    flow.write_text(APPROVALS)
    run = Terminal(["run", str(flow)], tmp_path)
    try:
        run.wait_for("run it? > ")
        run.type("")  # no answer: asked again, nothing refused
        run.wait_for("run it? > ", times=2)
        run.type("Y")
        run.wait_for("run it? > ", times=3)
        run.type("n")
        run.wait_for("run it? > ", times=4)
        run.type("not that one")
        run.wait_for("USER → helper> ", times=1)
        run.process.send_signal(signal.SIGINT)
    except BaseException:
        run.close()
        raise
    shown = run.finish()
    assert "type yes or no" in shown, shown
    run_id = shown.split("run ", 1)[1].split()[0]
    assert _results(tmp_path, run_id) == [
        ("5.0", False),
        ("The person did not approve this call.", True),
        ("The person did not approve this call: not that one", True),
    ], shown


def test_chat_reads_approvals_the_same_way_and_lets_a_node_answer_only_when_told(
    tmp_path: Path,
) -> None:
    chat = chat_with(tmp_path, "approvals.yaml", APPROVALS)
    try:
        chat.wait_for("USER → helper> ")
        chat.type("")  # an empty first line starts nothing
        chat.wait_for("type one to start the run")
        chat.type("means, please")
        chat.wait_for("run it? > ")
        chat.type("yes")
        chat.wait_for("run it? > ", times=2)
        chat.type("y")
        chat.wait_for("run it? > ", times=3)
        chat.type("/let")  # not a person's turn: refused, still asked
        chat.wait_for("this one waits for yes or no")
        chat.type("NO")
        chat.wait_for("USER → helper> ", times=2)
        chat.type("")  # an empty line at a person's prompt asks again, with a hint
        chat.wait_for("or /let to let USER answer by itself")
        chat.type("/let")  # USER answers by itself: the script's next reply, TERMINATE
        chat.wait_for("terminated: USER said TERMINATE")
        chat.type("/quit")
        shown = chat.wait_for("is stored")
    finally:
        chat.close()
    assert "USER: TERMINATE" in shown and "terminated: USER said TERMINATE" in shown, shown
    run_id = shown.split("run ", 1)[1].split()[0]
    assert _results(tmp_path, run_id) == [
        ("5.0", False),
        ("2.0", False),
        ("The person did not approve this call.", True),
    ], shown
    exported = run_cli("export", run_id, cwd=tmp_path).stdout.splitlines()
    resumes = [e["feedback"] for e in map(json.loads, exported) if e["type"] == "resume"]
    assert resumes == ["yes", "y", "NO", ""], shown  # the empty line resumed nothing
