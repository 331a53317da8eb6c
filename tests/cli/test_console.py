"""roost run and roost chat in a terminal: what a person sees, and the prompt they answer at."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from pathlib import Path

from fakes.llm_server import FakeLLMServer
from fakes.script import FakeCall, Reply

from tests.cli_inprocess import run_cli
from tests.engine.conftest import ASK
from tests.fakes.terminal import Terminal, chat_with, plain, read_until, spawn

ADDER = Path(__file__).parents[1] / "providers" / "data"


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
