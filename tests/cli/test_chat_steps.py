"""``roost chat`` runs one step at a time: Ctrl-C stops the reply in progress, the chat goes on."""

from __future__ import annotations

import json
import os
import signal
from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer
from fakes.script import Broken, Reply

from tests.cli_inprocess import run_cli
from tests.fakes.terminal import Terminal

if TYPE_CHECKING:
    from pathlib import Path

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
