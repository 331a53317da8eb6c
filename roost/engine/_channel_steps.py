"""A channel's turns: who speaks next, chosen by its plan, its routes, a person or its director.

The routes of the last speaker's entry are judged on its reply (its marker taken
off); a turn with one candidate, or a strategy that needs no one, is decided at
once, and the ``select`` that records it is the step's only event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine.calls import error_text, request_digest
from roost.engine.recorder import build_event, build_whole
from roost.engine.routes import RouteFailure
from roost.events import InterruptEvent, RouteRecord
from roost.messages import ChatMessage, ModelRequest, ModelResponse
from roost.nodes.channel import ChannelPlan, ChannelTurn, channel_turn, routed_turn
from roost.nodes.directors import By, candidates, choose_by_llm
from roost.nodes.human import manual_choice
from roost.nodes.roles import render, role_context
from roost.runstate import without_marker

if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.engine._endings import Endings, Step
    from roost.engine.calls import ModelCaller
    from roost.engine.recorder import Recorder
    from roost.engine.routes import RouteJudge
    from roost.flow.markers import MarkerRule
    from roost.flow.models import Flow


class ChannelSteps:
    """Takes the steps of a run's channels: each turn decided, and the speaker selected."""

    def __init__(
        self,
        *,
        flow: Flow,
        recorder: Recorder,
        caller: ModelCaller,
        routes: RouteJudge,
        ends: Endings,
        markers: Mapping[str, MarkerRule],
        humans: frozenset[str],
    ) -> None:
        self.flow = flow
        self.rec = recorder
        self.state = recorder.state
        self.caller = caller
        # Who judges conditional routes: the live run imports python conditions, a
        # replay reads them from the record.
        self.routes = routes
        self.ends = ends
        self._markers = markers
        self._humans = humans
        self._plans: dict[str, ChannelPlan] = {}

    def turn(self, channel: str, to: str) -> ChannelTurn:
        """``channel``'s turn as it answers ``to``: its speaker decided, or who is to decide."""
        plan = self._plans.get(channel)
        if plan is None:
            plan = self._plans[channel] = ChannelPlan(self.flow, channel)
        if plan.routed:  # a flow without routes does not look further
            last = self.state.last_into.get(channel)
            if last in plan.routed:
                return self._routed_turn(channel, to, plan, last)
        return channel_turn(self.flow, self.state, channel, plan)

    def _routed_turn(self, channel: str, to: str, plan: ChannelPlan, last: str) -> ChannelTurn:
        """The turn after ``last``'s reply, its routes judged on that reply (marker off)."""
        state = self.state
        total, capped = plan.counts(state)
        if total >= plan.config.max_rounds:
            return channel_turn(self.flow, state, channel, plan)  # the cap ends it first
        entry = state.history[state.inbox_of(channel).indices[-1]]
        text = without_marker(entry.content, self._markers.get(last, "end"))
        data = getattr(entry, "data", None)
        judge = self.routes
        try:
            held = tuple(
                judge(entry.seq, i, route, text, data) for i, route in enumerate(plan.routed[last])
            )
        except RouteFailure as exc:
            self.ends.fail(channel, to, str(exc))
            return ChannelTurn((), ended="error")
        key = (last, held)
        turn = None if capped else plan.routed_turns.get(key)
        if turn is None:
            labels, routes = plan.labels[last], plan.routed[last]
            judged = tuple(
                build_whole(RouteRecord, {"to": r.to, "when": labels[i], "held": held[i]})
                for i, r in enumerate(routes)
            )
            turn = routed_turn(self.flow, state, channel, last, judged, plan.plain[last])
            if not capped and turn.by != "random":
                plan.routed_turns[key] = turn
        return turn

    async def speaks(self, channel: str, to: str, turn: ChannelTurn) -> Step:
        """What follows a turn not decided yet: the channel's end, a pause for a person to
        pick, or the speaker its director picks, selected."""
        if turn.ended == "error":
            return None  # a route's python condition failed: recorded as an error
        if turn.ended is not None:
            self.ends.terminate(channel, turn.ended, turn.routes)
            return None
        chosen, by = turn.chosen, turn.by
        if turn.ask == "manual":
            if self.ends.holds():
                return None
            self.rec.add(
                InterruptEvent, from_=channel, to=to, reason="manual_select", routes=turn.routes
            )
            self.rec.flush()
            return None
        if turn.ask == "llm":
            decided = await self._ask_director(channel, to, turn.found)
            if decided is None:
                return None
            chosen, by = decided
        assert chosen is not None and by is not None
        return self.selected(channel, turn.found, chosen, by, turn.routes)

    def selected(
        self,
        channel: str,
        found: tuple[str, ...],
        chosen: str,
        by: By,
        routes: tuple[RouteRecord, ...] | None = None,
    ) -> Step:
        """Records that ``chosen`` speaks next in ``channel``, and gives the step that follows."""
        self.rec.add_select(channel, found, chosen, by, routes)
        return self.after_select(channel, chosen)

    def after_select(self, channel: str, chosen: str) -> Step:
        """A member that always waits for a person pauses the run; any other speaks."""
        if chosen in self._humans:
            self.ends.pause(chosen, channel)
            return None
        return (chosen, channel)

    def person_choice(
        self, channel: str, answer: str, routes: tuple[RouteRecord, ...] | None = None
    ) -> tuple[str, tuple[str, ...]]:
        """The member a person named for ``channel`` and the candidates (raises when refused)."""
        # Among the routes that held when the person was asked (recorded with the question).
        if routes is not None:
            found = candidates(self.flow, self.state, channel, routes)
        else:
            found = channel_turn(self.flow, self.state, channel).found
        members = list(self.flow.channels[channel].members)
        return manual_choice(answer, channel, members, found), found

    async def _ask_director(
        self, channel: str, to: str, found: tuple[str, ...]
    ) -> tuple[str, By] | None:
        """The member the director's model picks among ``found``, and how it was picked;
        None when it could not be asked (recorded as an error)."""
        flow, state = self.flow, self.state
        config = flow.channels[channel]
        provider = flow.provider_of(channel)
        if provider is None:
            self.ends.fail(channel, to, f"the director of {channel} has no provider")
            return None
        try:
            context = role_context(flow, state, channel, list(config.members), channel)
            system = render(config.role, **context)
        except Exception as exc:  # a failure here stops the run, never the process
            self.ends.fail(channel, to, error_text(exc))
            return None

        async def ask(messages: list[ChatMessage]) -> str | None:
            request = build_event(
                ModelRequest,
                {"system": system, "messages": tuple(messages), "tools": (), "node": channel},
            )
            digest = request_digest(system, (), b"", messages)
            response = await self.caller.call(channel, provider, request, digest, (channel, to))
            return response.message.content if isinstance(response, ModelResponse) else None

        try:
            return await choose_by_llm(flow, state, channel, found, ask)
        except Exception as exc:  # a failure here stops the run, never the process
            self.ends.fail(channel, to, error_text(exc))
            return None
