"""``roost chat``'s session commands in a terminal: what /info says of each agent's context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.fakes.terminal import Terminal

if TYPE_CHECKING:
    from pathlib import Path

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
