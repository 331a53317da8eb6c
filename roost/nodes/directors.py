"""Who speaks next in a channel (docs/semantics.md, "Directors").

Candidates are the members under their own cap, minus the last speaker
(unless ``allow_repeat``), narrowed to the last speaker's ``transitions``. The
strategies here are pure functions of the flow and the state; the ``llm``
strategy asks a model through an ``ask`` callback the interpreter supplies.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal

from roost.events import InterruptEvent
from roost.flow.models import ROUTE_END, plain_successors
from roost.messages import AssistantMessage, ChatMessage, UserMessage
from roost.nodes.agent import transcript, transcript_text
from roost.nodes.roles import agent_system, render, role_context

if TYPE_CHECKING:
    from roost.events import RouteRecord
    from roost.flow.models import Channel, Flow
    from roost.runstate import RunState

By = Literal["llm", "llm_retry", "fallback", "only_candidate", "round_robin", "random", "manual"]
Ask = Callable[[list[ChatMessage]], Awaitable[str | None]]

SELECTION_PROMPT = """\
You are choosing who speaks next in {{ channel }}.

The members who may speak next:
{% for candidate in candidates -%}
- {{ candidate.name }}{% if candidate.role %}: {{ candidate.role }}{% endif %}
{% endfor %}
The conversation so far:
{{ conversation_text }}
Answer with the name of the one member who should speak next, and nothing else.
Choose one of: {{ candidates | map(attribute="name") | join(", ") }}."""

# The built-in prompt shows the transcript as one text (``transcript_text``): rendering it
# line by line in the template would cost the whole run's length before every choice.
# What it prints is what ``{% for line in conversation %}{{ line }}\n{% else %}`` would.
NOTHING_SAID = "(nothing has been said yet)\n"

CORRECTION = (
    "{answer!r} is not one of the members who may speak next. "
    "Answer with exactly one of these names and nothing else: {names}."
)


def last_member(state: RunState, channel: str, members: list[str]) -> str | None:
    """The member who spoke into the channel last, or None before any member has."""
    last = state.last_into.get(channel)
    return last if last in members else None


def candidates(
    flow: Flow,
    state: RunState,
    channel: str,
    routes: Sequence[RouteRecord] | None = None,
) -> tuple[str, ...]:
    """The members that may speak next in ``channel``, in member order.

    ``routes``: the last speaker's routes as judged (default: those the pending
    question records), of which the targets that held are candidates.
    """
    config = flow.channels[channel]
    members = config.members
    last = state.last_into.get(channel)
    if last not in members:
        last = None
    cap = flow.defaults.max_rounds
    pending = state.pending
    if routes is None and isinstance(pending, InterruptEvent):
        routes = pending.routes
    if routes is not None and last is not None:
        # A person picks among the members whose routes held (recorded when asked).
        allowed = routed_successors(config, last, routes)
        return candidates_among(config, state.sent, channel, cap, last, allowed)
    return candidates_after(config, state.sent, channel, cap, last)


def routed_successors(config: Channel, last: str, routes: Sequence[RouteRecord]) -> tuple[str, ...]:
    """The plain successors of ``last`` and the targets of its routes that held."""
    plain = plain_successors((config.transitions or {}).get(last, []))
    return (*plain, *(r.to for r in routes if r.held and r.to != ROUTE_END))


def candidates_after(
    config: Channel, sent: dict[tuple[str, str], int], channel: str, cap: int, last: str | None
) -> tuple[str, ...]:
    """The candidates given the message counts and the last member speaker (None: nobody yet).

    A tuple: the select event keeps it as it is, and a tuple of names is one
    object the garbage collector stops tracking, where a list stays tracked.
    """
    allowed: tuple[str, ...] | None = None
    transitions = config.transitions
    if last is not None and transitions is not None:
        entry = transitions.get(last)
        if entry is not None:
            allowed = plain_successors(entry)
    return candidates_among(config, sent, channel, cap, last, allowed)


def candidates_among(
    config: Channel,
    sent: dict[tuple[str, str], int],
    channel: str,
    cap: int,
    last: str | None,
    allowed: Sequence[str] | None,
) -> tuple[str, ...]:
    """The candidates under their caps, not ``last`` (unless allow_repeat), among ``allowed``
    (None: every member)."""
    found = [m for m in config.members if sent.get((m, channel), 0) < cap]
    if last is not None:
        if not config.director.allow_repeat:
            found = [m for m in found if m != last]
        if allowed is not None:
            found = [m for m in found if m in allowed]
    return tuple(found)


def channel_count(state: RunState, channel: Channel, name: str) -> int:
    """Member-authored success messages into the channel (a member's start message included)."""
    sent = state.sent
    total = 0
    for member in channel.members:
        total += sent.get((member, name), 0)
    return total


def round_robin(members: list[str], found: Sequence[str], last: str | None) -> str:
    """The next candidate after ``last`` in member order (the first one before anyone spoke)."""
    if last is None or last not in members:
        return found[0]
    start = members.index(last)
    count = len(members)
    for step in range(1, count + 1):
        member = members[(start + step) % count]
        if member in found:
            return member
    return found[0]


def seeded_choice(flow: Flow, state: RunState, channel: str, found: Sequence[str]) -> str:
    """A random candidate, the same in every process for the same seed and select count.

    The generator is derived from the seed, the channel and the number of
    selects the channel already made, so a run continued elsewhere draws the
    same as one that never stopped.
    """
    seed = flow.channels[channel].director.seed
    selects = state.selects.get(channel, 0)
    rng = random.Random(f"{seed if seed is not None else 0}:{channel}:{selects}")
    return rng.choice(found)


def parse_answer(text: str, found: Sequence[str]) -> str | None:
    """The candidate an answer names (a leading ``@`` and white space ignored), else None."""
    name = text.strip().lstrip("@").strip()
    return name if name in found else None


def selection_prompt(flow: Flow, state: RunState, channel: str, found: Sequence[str]) -> str:
    """The director's selection prompt: the flow's ``director.prompt`` or the built-in one."""
    config = flow.channels[channel]
    agents = flow.agents
    # A candidate is described by its description when it has one, else by its role
    # rendered as it would be for its own reply into this channel.
    listed = [
        {
            "name": name,
            "role": (agents[name].description or agent_system(flow, state, name, channel))
            if name in agents
            else "",
        }
        for name in found
    ]
    context = role_context(flow, state, channel, list(config.members), channel)
    source = config.director.prompt
    if not source:  # the built-in prompt: the transcript as one text, never a loop
        text = transcript_text(state, channel) or NOTHING_SAID
        return render(
            SELECTION_PROMPT, **context, channel=channel, candidates=listed, conversation_text=text
        )
    conversation = transcript(state, channel)
    return render(source, **context, channel=channel, candidates=listed, conversation=conversation)


async def choose_by_llm(
    flow: Flow, state: RunState, channel: str, found: Sequence[str], ask: Ask
) -> tuple[str, By] | None:
    """Asks the director's model; one corrective retry, then a seeded random candidate.

    Returns None when a call failed (``ask`` has then recorded the error).
    """
    prompt = selection_prompt(flow, state, channel, found)
    messages: list[ChatMessage] = [UserMessage(content=prompt)]
    answer = await ask(messages)
    if answer is None:
        return None
    chosen = parse_answer(answer, found)
    if chosen is not None:
        return chosen, "llm"
    note = CORRECTION.format(answer=answer.strip(), names=", ".join(found))
    messages += [AssistantMessage(content=answer), UserMessage(content=note)]
    second = await ask(messages)
    if second is None:
        return None
    chosen = parse_answer(second, found)
    if chosen is not None:
        return chosen, "llm_retry"
    return seeded_choice(flow, state, channel, found), "fallback"
