"""AutoGen AgentChat's side of the comparison: a RoundRobinGroupChat in memory.

    .venv/bin/python bench/peers/autogen_side.py channel|pair [--messages 2000]

The members are chat agents that answer every turn with the same text (a
``BaseChatAgent`` whose ``on_messages`` returns one ``TextMessage``): the
scripted model. The team runs until ``MaxMessageTermination`` (the task's
message counts as one). AgentChat keeps no durable log of a run by itself
(``save_state`` is called by hand), so it has no stored scenario.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import TYPE_CHECKING

import timing
from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_agentchat.teams import RoundRobinGroupChat

if TYPE_CHECKING:
    from collections.abc import Sequence

    from autogen_core import CancellationToken

REPLY = "A short reply."


class Scripted(BaseChatAgent):
    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(
        self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken
    ) -> Response:
        return Response(chat_message=TextMessage(content=REPLY, source=self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        pass


def runner(members: list[str], task: str) -> timing.Run:
    def run(messages: int) -> int:
        agents = [Scripted(name, description=f"{name} answers") for name in members]
        team = RoundRobinGroupChat(
            agents, termination_condition=MaxMessageTermination(messages + 1)
        )
        result = asyncio.run(team.run(task=task))
        return len(result.messages)

    return run


def main() -> None:
    args = timing.arguments(["channel", "pair"])
    if args.scenario == "pair":
        run = runner(["alice", "bob"], "Hello Bob.")
    else:
        run = runner(["alice", "bob", "carol"], "Let us talk.")
    timing.check(run(30), 31, "autogen")
    figures = timing.measure(run, args.messages)
    timing.report(figures, {"autogen-agentchat": importlib.metadata.version("autogen-agentchat")})


if __name__ == "__main__":
    main()
