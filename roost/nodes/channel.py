"""How a channel speaks: it does not reply, its director picks who speaks next."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.flow.models import ROUTE_END, plain_successors, routes_in
from roost.flow.routes import short_label
from roost.nodes.directors import (
    By,
    candidates_after,
    candidates_among,
    channel_count,
    last_member,
    round_robin,
    seeded_choice,
)

if TYPE_CHECKING:
    from roost.events import RouteRecord
    from roost.flow.models import Channel, Flow, Route
    from roost.runstate import RunState


@dataclass(slots=True, frozen=True)
class ChannelTurn:
    """What a channel's turn comes to before any model or person is asked.

    ``ended`` names why the run terminates (``max_rounds`` or
    ``no_candidate``); otherwise ``chosen`` is set when no one needs asking,
    and ``ask`` says who must decide (``llm`` or ``manual``). Frozen: a plan
    hands the same turn out again.
    """

    found: tuple[str, ...]
    ended: str | None = None
    chosen: str | None = None
    by: By | None = None
    ask: str | None = None
    routes: tuple[RouteRecord, ...] | None = None  # the last speaker's routes, judged


_MAX_ROUNDS = ChannelTurn((), ended="max_rounds")


class ChannelPlan:
    """What a channel's turns share, worked out once from its configuration.

    Until some member reaches its own cap, the candidates depend only on the
    member who spoke last, so they and the turn they lead to (unless a random
    draw decides it) are worked out once per possible last speaker; a turn
    then costs a few lookups and makes nothing.
    """

    __slots__ = (
        "by_last",
        "cap",
        "config",
        "first",
        "keys",
        "labels",
        "plain",
        "routed",
        "routed_turns",
    )

    def __init__(self, flow: Flow, channel: str) -> None:
        config = self.config = flow.channels[channel]
        self.keys = tuple((member, channel) for member in config.members)
        self.cap = cap = flow.defaults.max_rounds
        none_sent: dict[tuple[str, str], int] = {}
        self.by_last: dict[str | None, tuple[tuple[str, ...], ChannelTurn | None]] = {}
        for last in (None, *config.members):
            found = candidates_after(config, none_sent, channel, cap, last)
            self.by_last[last] = (found, _decided(config, found, last))
        self.first = self.by_last[None]
        # Members whose transitions hold routes: their successors depend on what they said.
        transitions = config.transitions or {}
        self.routed: dict[str, tuple[Route, ...]] = {
            m: routes_in(e) for m, e in transitions.items() if routes_in(e)
        }
        self.plain = {m: plain_successors(transitions[m]) for m in self.routed}
        # Each route's condition in short, as the select event records it: made once.
        self.labels = {m: tuple(short_label(r.when) for r in rs) for m, rs in self.routed.items()}
        # The turn after a routed member, by which of its routes held, while no member
        # is at its own cap (then the same routes held lead to the same turn).
        self.routed_turns: dict[tuple[str, tuple[bool, ...]], ChannelTurn] = {}

    def counts(self, state: RunState) -> tuple[int, bool]:
        """The member messages into the channel, and whether a member is at its own cap."""
        sent = state.sent
        total = 0
        capped = False
        cap = self.cap
        for key in self.keys:
            count = sent.get(key, 0)
            capped = capped or count >= cap
            total += count
        return total, capped


def routed_turn(
    flow: Flow,
    state: RunState,
    channel: str,
    last: str,
    routes: tuple[RouteRecord, ...],
    plain: tuple[str, ...],
) -> ChannelTurn:
    """The turn after ``last`` spoke, its routes judged: a route to TERMINATE that held ends
    the run; otherwise the candidates are its plain successors and the targets that held.
    The channel's cap is checked before (``ChannelPlan.counts``): no route is judged then."""
    config = flow.channels[channel]
    if any(r.held and r.to == ROUTE_END for r in routes):
        return ChannelTurn((), ended="route", routes=routes)
    allowed = (*plain, *(r.to for r in routes if r.held))
    found = candidates_among(config, state.sent, channel, flow.defaults.max_rounds, last, allowed)
    turn = _decided(config, found, last, routes)
    if turn is None:
        chosen = seeded_choice(flow, state, channel, found)
        return ChannelTurn(found, chosen=chosen, by="random", routes=routes)
    return turn


def channel_turn(
    flow: Flow, state: RunState, channel: str, plan: ChannelPlan | None = None
) -> ChannelTurn:
    """The decision a channel can take on its own, as a pure function of the state.

    ``plan`` (made from this flow and channel) only makes the common case cheaper.
    """
    if plan is None:
        return _general_turn(flow, state, channel)
    sent = state.sent
    total = 0
    cap = plan.cap
    for key in plan.keys:
        count = sent.get(key, 0)
        if count >= cap:  # a member at its own cap: the candidates need working out
            return _general_turn(flow, state, channel)
        total += count
    if total >= plan.config.max_rounds:
        return _MAX_ROUNDS
    found, turn = plan.by_last.get(state.last_into.get(channel), plan.first)
    if turn is None:
        return ChannelTurn(found, chosen=seeded_choice(flow, state, channel, found), by="random")
    return turn


def _general_turn(flow: Flow, state: RunState, channel: str) -> ChannelTurn:
    config: Channel = flow.channels[channel]
    if channel_count(state, config, channel) >= config.max_rounds:
        return _MAX_ROUNDS
    last = last_member(state, channel, config.members)
    found = candidates_after(config, state.sent, channel, flow.defaults.max_rounds, last)
    turn = _decided(config, found, last)
    if turn is None:
        return ChannelTurn(found, chosen=seeded_choice(flow, state, channel, found), by="random")
    return turn


def _decided(
    config: Channel,
    found: tuple[str, ...],
    last: str | None,
    routes: tuple[RouteRecord, ...] | None = None,
) -> ChannelTurn | None:
    """The turn the candidates and the last speaker decide alone; None when a draw decides."""
    if not found:
        return ChannelTurn(found, ended="no_candidate", routes=routes)
    if len(found) == 1:
        return ChannelTurn(found, chosen=found[0], by="only_candidate", routes=routes)
    strategy = config.director.strategy
    if strategy == "round_robin":
        chosen = round_robin(config.members, found, last)
        return ChannelTurn(found, chosen=chosen, by="round_robin", routes=routes)
    if strategy == "random":
        return None
    return ChannelTurn(found, ask=strategy, routes=routes)
