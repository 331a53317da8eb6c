"""AG2's side of the comparison (``autogen`` from the ag2 package), silent and in memory.

    .venv/bin/python bench/peers/ag2_side.py channel|pair [--messages 2000]

- channel: a GroupChat of three ConversableAgents, round robin, started by a
  fourth agent through a GroupChatManager (``initiate_chat(..., silent=True)``);
- pair: two ConversableAgents, ``initiate_chat(..., max_turns=N/2, silent=True)``.

The scripted model is AG2's own: agents without an LLM answer with their
``default_auto_reply``. AG2 keeps no durable log of a chat, so it has no
stored scenario.
"""

from __future__ import annotations

import importlib.metadata
import logging

import timing
from autogen import ConversableAgent, GroupChat, GroupChatManager

REPLY = "A short reply."


def agent(name: str) -> ConversableAgent:
    return ConversableAgent(
        name,
        llm_config=False,
        human_input_mode="NEVER",
        code_execution_config=False,
        default_auto_reply=REPLY,
        max_consecutive_auto_reply=10**9,
    )


def channel(messages: int) -> int:
    members = [agent("alice"), agent("bob"), agent("carol")]
    chat = GroupChat(
        agents=members,
        messages=[],
        max_round=messages + 1,  # the start message counts as a round
        speaker_selection_method="round_robin",
        send_introductions=False,
    )
    manager = GroupChatManager(chat, llm_config=False, human_input_mode="NEVER")
    agent("USER").initiate_chat(manager, message="Let us talk.", silent=True)
    return len(chat.messages)


def pair(messages: int) -> int:
    alice, bob = agent("alice"), agent("bob")
    alice.initiate_chat(bob, message="Hello Bob.", max_turns=messages // 2, silent=True)
    return len(alice.chat_messages[bob])


def main() -> None:
    logging.disable(logging.WARNING)  # a chat that reaches max_round says so; we asked for it
    args = timing.arguments(["channel", "pair"])
    run = channel if args.scenario == "channel" else pair
    timing.check(run(30), 30, "ag2")
    figures = timing.measure(run, args.messages)
    timing.report(figures, {"ag2": importlib.metadata.version("ag2")})


if __name__ == "__main__":
    main()
