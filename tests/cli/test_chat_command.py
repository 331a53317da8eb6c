"""``roost chat`` in a terminal: a director's turn, and /fork, /help and /compact at its prompt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli_inprocess import run_cli
from tests.engine.conftest import ASK
from tests.fakes.terminal import Terminal, chat_with

FLOWS = Path(__file__).parents[2] / "flows"


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
