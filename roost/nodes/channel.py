"""How a channel speaks: it does not reply, its director picks who speaks next."""

from __future__ import annotations

from dataclasses import dataclass

from roost.engine.directors import (
    By,
    candidates_after,
    channel_count,
    last_member,
    round_robin,
    seeded_choice,
)
from roost.engine.state import RunState
from roost.flow.models import Flow


@dataclass(slots=True)
class Turn:
    """What a channel's turn comes to before any model or person is asked.

    ``ended`` names why the run terminates (``max_rounds`` or
    ``no_candidate``); otherwise ``chosen`` is set when no one needs asking,
    and ``ask`` says who must decide (``llm`` or ``manual``).
    """

    found: list[str]
    ended: str | None = None
    chosen: str | None = None
    by: By | None = None
    ask: str | None = None


def channel_turn(flow: Flow, state: RunState, channel: str) -> Turn:
    """The decision a channel can take on its own, as a pure function of the state."""
    config = flow.channels[channel]
    if channel_count(state, config, channel) >= config.max_rounds:
        return Turn([], ended="max_rounds")
    last = last_member(state, channel, config.members)
    found = candidates_after(config, state.sent, channel, flow.defaults.max_rounds, last)
    if not found:
        return Turn(found, ended="no_candidate")
    if len(found) == 1:
        return Turn(found, chosen=found[0], by="only_candidate")
    strategy = config.director.strategy
    if strategy == "round_robin":
        return Turn(found, chosen=round_robin(config.members, found, last), by="round_robin")
    if strategy == "random":
        return Turn(found, chosen=seeded_choice(flow, state, channel, found), by="random")
    return Turn(found, ask=strategy)
