"""A case's simulated person: a model that answers the person's interrupts, as its role says.

It sees the conversation from the person's side: what the person said is its
own turn, and what the others said to the person (or in the channel the
person sits in) is what it is told. Its calls are recorded in the case's run
as calls of the person's node, with ``purpose: simulated_person``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.events import MessageEvent
from roost.flowtest.outside import outside_call
from roost.messages import AssistantMessage, ChatMessage, ModelRequest, UserMessage

if TYPE_CHECKING:
    from roost.engine import Runner
    from roost.events import Event
    from roost.flowtest.spec import Outside, User

SIMULATED = "simulated_person"  # the purpose its calls are recorded with
PLAYING = (
    "You play the person in this conversation, never the assistant. Stay in your role. "
    "Write only what you say next, as plain text."
)
OPENING = "(The conversation begins.)"


def person_request(user: User, node: str, events: list[Event]) -> ModelRequest:
    """What the simulated person is asked: its role, and the conversation as it saw it."""
    messages: list[ChatMessage] = []
    for event in events:
        if not isinstance(event, MessageEvent):
            continue
        if event.from_ == node:
            messages.append(AssistantMessage(content=event.content))
        else:
            messages.append(UserMessage(content=event.content))
    if not messages or isinstance(messages[0], AssistantMessage):
        messages.insert(0, UserMessage(content=OPENING))
    return ModelRequest(system=f"{user.role}\n\n{PLAYING}", messages=tuple(messages), node=node)


async def simulated_reply(runner: Runner, outside: Outside, user: User, node: str) -> str:
    """What the simulated person says at ``node``'s interrupt (its call recorded)."""
    request = person_request(user, node, runner.log.load())
    return await outside_call(runner, outside, user.provider, node, request, SIMULATED)
