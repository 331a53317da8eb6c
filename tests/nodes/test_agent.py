"""What an agent is shown when it replies: between two agents their messages with roles,
in a channel one transcript."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.messages import AssistantMessage, ModelRequest, ModelResponse
from tests.engine.conftest import channel, messages, pair, runner_for

if TYPE_CHECKING:
    from roost.providers.base import TextCallback


async def test_a_channel_member_sees_one_transcript() -> None:
    runner, log = runner_for(
        channel(replies="[hello, {echo: last}]", max_rounds=3, members="[x, y]")
    )
    await runner.start()
    assert messages(log.load())[2][2] == (
        "The conversation in team so far:\n@USER: Go\n@x: hello\n\n"
        "Write your next message in this conversation as y. "
        "Do not introduce yourself and do not start with your name."
    )


async def test_timestamps_prefix_each_line_of_a_channel_transcript() -> None:
    runner, log = runner_for(
        channel(replies="[{echo: last}, b]", defaults=", timestamps: true", max_rounds=2)
    )
    await runner.start()
    start = log.load()[1]
    assert f"[{start.ts}] @USER: Go" in messages(log.load())[1][2]


async def test_between_two_agents_each_sees_only_their_messages_with_roles() -> None:
    runner, log = runner_for(pair("[{echo: last}, second, {echo: system}, TERMINATE]"))
    await runner.start()
    said = [m[2] for m in messages(log.load())]
    assert said[1] == "Hi"  # the last message assistant was shown
    assert said[3] == "You help."


class Recording:
    """A provider that keeps what each request showed: (node, [(kind, content), ...])."""

    name = "rec"
    model = "rec-model"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.seen: list[tuple[str, list[tuple[str, str]]]] = []

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        shown = [(type(m).__name__, m.content) for m in request.messages]
        self.seen.append((request.node, shown))
        return ModelResponse(message=AssistantMessage(content=self.replies[len(self.seen) - 1]))


async def test_each_agent_is_shown_the_whole_exchange_both_ways_with_its_own_as_assistant() -> None:
    provider = Recording(["a1", "u1", "a2", "TERMINATE"])
    runner, _log = runner_for(pair("[unused]"), providers=lambda name: provider)
    await runner.start()
    you, me = "UserMessage", "AssistantMessage"
    assert provider.seen[2] == ("assistant", [(you, "Hi"), (me, "a1"), (you, "u1")])
    assert provider.seen[3] == ("USER", [(me, "Hi"), (you, "a1"), (me, "u1"), (you, "a2")])


async def test_timestamps_prefix_user_messages_with_their_recorded_time() -> None:
    runner, log = runner_for(pair("[{echo: last}, TERMINATE]", extra=", timestamps: true"))
    await runner.start()
    start = log.load()[1]
    assert messages(log.load())[1][2] == f"[{start.ts}] Hi"
