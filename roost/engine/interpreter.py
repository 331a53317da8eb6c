"""start, chat and reply (docs/semantics.md), as an explicit loop.

``chat(from, to)`` returns the next step instead of calling itself, and
``run_from`` iterates until the run pauses, stops at an error or terminates,
so a conversation of any length runs in constant stack depth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from roost.engine.background import BackgroundSource, delivery_note, delivery_text
from roost.engine.budget import BudgetHalt, BudgetKeeper, asked_budget, has_budget
from roost.engine.calls import ModelCaller, error_text, request_digest
from roost.engine.compaction import Asker, Compactor, context_sizes, fixed_chars
from roost.engine.hooks import HookRecorder, HooksFor, no_hooks
from roost.engine.images import LoadedImage
from roost.engine.recorder import Recorder, build_event, build_whole, model_request
from roost.engine.routes import LiveRoutes, RouteFailure, RouteJudge, reply_data
from roost.engine.tool_loop import Reply, ToolLoop
from roost.engine.unfinished import Unfinished, unfinished
from roost.errors import RoostError, RunStateError, UsageError
from roost.events import (
    BudgetEvent,
    ErrorEvent,
    Event,
    FlowRecord,
    ImageRecord,
    InterruptEvent,
    LlmCallEvent,
    MemoryEntry,
    MemoryEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RouteRecord,
    RunStartEvent,
    SelectEvent,
    SkillInfo,
    SkillsEvent,
    TerminateEvent,
    map_texts,
)
from roost.flow.markers import INTERRUPT, TERMINATE, MarkerRule, marker_in
from roost.flow.skills import agent_skills, current_catalogue
from roost.flow.start_message import render_start
from roost.messages import ChatMessage, ModelRequest, ModelResponse
from roost.nodes.agent import memory_note, seen_by, shown_skills, system_prompt, with_recall
from roost.nodes.channel import ChannelPlan, Turn, channel_turn, routed_turn
from roost.nodes.directors import By, candidates, channel_count, choose_by_llm
from roost.nodes.human import check_self_answer, is_human, manual_choice
from roost.nodes.roles import render, role_context
from roost.runstate import without_marker

if TYPE_CHECKING:  # roost.tools is imported only by flows that have tools
    from roost.engine.digests import RequestDigest
    from roost.flow.models import Flow
    from roost.flow.redact import Redactor
    from roost.nodes.agent import ImageSource
    from roost.ports import MemoryBank
    from roost.runstate import HistoryEntry
    from roost.tools.base import Tool

Step = tuple[str, str] | None
# Interrupts that ask a person about tool calls: the answer is read by the tool loop.
_TOOL_QUESTIONS = ("tool_approval", "tool_plan")
KeepImages = Callable[[Sequence[LoadedImage | ImageRecord]], tuple[ImageRecord, ...]]


def _records_only(images: Sequence[LoadedImage | ImageRecord]) -> tuple[ImageRecord, ...]:
    """Images as records, for an interpreter with nowhere to keep them."""
    return tuple(image.record() if isinstance(image, LoadedImage) else image for image in images)


ToolsFor = Callable[[str, str], Sequence["Tool"]]
# The skills a flow's agents may use, as found now (or as a replay's record says).
SkillsFor = Callable[["Flow"], tuple[SkillInfo, ...]]


def start_route(
    flow: Flow, content: str | None, frm: str | None, to: str | None
) -> tuple[str, str, str]:
    """The start message's (from, to, content): the flow's ``start`` with any overrides.

    Raises UsageError when there is no route or it names no node, and TemplateRenderError
    when the flow's start message does not render, before anything runs.
    """
    default = flow.start
    frm = frm or (default.from_ if default else None)
    to = to or (default.to if default else None)
    if not frm or not to:
        raise UsageError(f"{flow.name}: the flow has no start; give both --from and --to")
    for name in (frm, to):
        if flow.node_kind(name) is None:
            raise UsageError(f"{flow.name}: no agent or channel is called {name!r}")
    if frm == to:
        raise UsageError(f"{flow.name}: the start goes from {frm!r} to itself; give another --to")
    if content is None:  # the flow's own start message is a template, like a role
        content = render_start(flow, frm, to) if default else ""
    return frm, to, content


class Interpreter:
    """Drives one run of a flow, recording every step through a Recorder."""

    def __init__(
        self,
        *,
        flow: Flow,
        recorder: Recorder,
        caller: ModelCaller,
        tools_for: ToolsFor,
        redact: Redactor,
        flow_record: Callable[[], FlowRecord],
        memory: MemoryBank | None = None,
        skills: SkillsFor | None = None,
        hooks: HooksFor | None = None,
        images: ImageSource | None = None,
        keep_images: KeepImages | None = None,
        background: BackgroundSource | None = None,
        routes: RouteJudge | None = None,
    ) -> None:
        self.flow = flow
        # Who judges conditional routes: the live run imports python conditions, a
        # replay reads them from the record.
        self.routes: RouteJudge = routes or LiveRoutes(flow)
        # The agents whose replies are JSON (reply_format): their data is recorded.
        self._formats = frozenset(n for n, a in flow.agents.items() if a.reply_format is not None)
        self.memory = memory
        self.skills: SkillsFor = skills or current_catalogue
        self.images = images  # the bytes of the images messages carry, by their records
        # Keeps a message's images in the run's store, once the message is sure to be recorded.
        self._keep_images: KeepImages = keep_images or _records_only
        self.background = background
        # A pause or an end put off because background tasks are open: their results come first.
        self._held = False
        self.rec = recorder
        self.state = recorder.state
        self.caller = caller
        self.tools_for = tools_for
        self.redact = redact
        self.compactor = Compactor(flow, recorder, caller, memory)
        self.hooks = HookRecorder(recorder, hooks or no_hooks)
        self.loop = ToolLoop(recorder, self.compactor, redact, self.hooks)
        self._flow_record = flow_record
        self._max_rounds = flow.defaults.max_rounds
        # Fixed for the whole run, so looked up once rather than at every turn.
        self._humans = frozenset(name for name in flow.agents if is_human(flow, name))
        self._markers: dict[str, MarkerRule] = {name: flow.markers_of(name) for name in flow.agents}
        self._memory_notes = {name: memory_note(flow, name) for name in flow.agents}
        self._plans: dict[str, ChannelPlan] = {}
        self.budget: BudgetKeeper | None = None
        self.keep_budget()

    def set_budget(self, limits: Mapping[str, float]) -> None:
        """Sets the run's limits from outside (``--budget``, or what a parent run has left
        for its sub-flow), each recorded as ``raised``; a run not yet started records them
        right after its ``run_start``."""
        if self.state.next_seq == 0:
            self._outside: Mapping[str, float] | None = limits
            return
        spent = self.state.spent_by(None)
        for limit, allowed in limits.items():
            used = round(float(getattr(spent, limit)), 9)
            self.rec.add(BudgetEvent, limit=limit, spent=used, allowed=allowed, action="raised")
        self.keep_budget()

    def keep_budget(self) -> None:
        """Keeps the run's budgets from now on, if it has any (a limit set from outside
        counts); a run without one has no keeper, so its steps pay nothing for it."""
        if self.budget is None and has_budget(self.flow, self.state):
            self.budget = BudgetKeeper(self.flow, self.rec)
            self.caller.budget = self.loop.budget = self.budget

    # ------------------------------------------------------------------ the three entry points

    async def start(
        self,
        content: str | None,
        frm: str | None,
        to: str | None,
        images: Sequence[LoadedImage | ImageRecord] = (),
    ) -> None:
        """Records the start message with ``images`` and lets its addressee answer."""
        self._held = False
        state, flow = self.state, self.flow
        if state.status != "new":
            raise RunStateError(f"run {self.rec.run_id} has already started ({state.status})")
        frm, to, content = start_route(flow, content, frm, to)
        if state.next_seq == 0:
            self.rec.add(RunStartEvent, flow=self._flow_record())
            outside = getattr(self, "_outside", None)
            if outside:
                self.set_budget(outside)
        records = self._keep_images(images)
        self.rec.add(MessageEvent, from_=frm, to=to, content=content, images=records or None)
        if is_human(flow, to):
            self._pause(to, frm)
            return
        await self.run_from(to, frm)

    async def continue_(
        self, feedback: str, images: Sequence[LoadedImage | ImageRecord] = ()
    ) -> None:
        """Answers the pending interrupt with ``feedback`` and ``images`` (docs/semantics.md,
        "continue and retry")."""
        self._held = False
        pending = self.state.pending
        if self.state.status != "paused" or not isinstance(pending, InterruptEvent):
            status = self.state.status
            hints = {
                "error": "; retry it to redo the step that did not finish",
                # Nothing in a log tells a live process from a dead one: say both.
                "running": "; another process may be running it now; if that process "
                "stopped, retry it to redo the step it did not finish",
            }
            hint = hints.get(status, "")
            raise RunStateError(
                f"run {self.rec.run_id} is not paused at an interrupt ({status}); "
                f"nothing to continue{hint}"
            )
        # Answers that cannot be used are refused before anything is recorded.
        asked = asked_budget(self.state) if pending.reason == "budget" else None
        if asked is not None:
            await self._answer_budget(pending, asked, feedback)
            return
        if pending.reason == "manual_select":
            self._manual_choice(pending.from_, feedback, pending.routes)
        elif pending.reason not in _TOOL_QUESTIONS and not feedback:
            check_self_answer(self.flow, pending.from_)
        if images and (pending.reason in ("manual_select", "tool_approval") or not feedback):
            takes = "a choice" if pending.reason == "manual_select" else "a yes or a refusal"
            needs = "the answer's text too" if feedback == "" else f"{takes}, not images"
            raise UsageError(f"run {self.rec.run_id}: images go with an answer; give {needs}")
        records = self._keep_images(images)
        self.rec.add(
            ResumeEvent,
            from_=pending.from_,
            to=pending.to,
            feedback=feedback,
            images=records or None,
        )
        await self._run(self._after_resume(pending, feedback, records))

    async def _answer_budget(
        self, pending: InterruptEvent, asked: BudgetEvent, feedback: str
    ) -> None:
        """A person's answer to the budget: a new limit, and the refused step is made again;
        or no, and the run ends (reason budget)."""
        from roost.engine.budget import parse_limit

        if feedback.strip().lower() not in ("no", "n"):
            parse_limit(feedback, asked.limit, asked.spent)  # refused before anything is recorded
        step = self.state.step  # the step the budget refused, to make again
        self.rec.add(ResumeEvent, from_=pending.from_, to=pending.to, feedback=feedback)
        self.keep_budget()
        assert self.budget is not None  # the run has a budget: it asked
        if not self.budget.answer(feedback, asked):
            self._terminate(pending.to, "budget")
            return
        await self._run(step if step is not None else (pending.to, pending.from_))

    async def compact(self) -> int:
        """Compresses each agent's current view now, whatever its size (``roost chat``'s
        /compact); how many views changed. Only between steps of a paused run, or of one
        stopped at an error: the next step's requests are the smaller ones."""
        state, flow = self.state, self.flow
        if state.status not in ("paused", "error"):
            raise RunStateError(
                f"run {self.rec.run_id} is {state.status}: only a paused run, or one stopped "
                "at an error, can be compressed between its steps"
            )
        changed = 0
        for size in context_sizes(flow, state):
            provider = flow.provider_of(size.node)
            assert provider is not None  # context_sizes names only agents with a provider
            system = system_prompt(
                flow,
                state,
                size.node,
                size.to,
                note=self._memory_notes[size.node],
                skills=partial(shown_skills, flow, state, size.node),
            )
            asker = Asker(size.node, size.to, provider, fixed_chars(system))
            changed += await self.compactor.fit(asker, force=True)
        self.rec.flush()
        return changed

    async def retry(self, recorded: Callable[[], Sequence[Event]]) -> None:
        """Redoes the step that stopped at an error, or that a dead process left running.

        ``recorded`` gives the log's events; it is read only for a run left
        running, to find what its last step had yet to do.
        """
        self._held = False
        state = self.state
        if state.status == "error" and isinstance(state.pending, ErrorEvent):
            pending = state.pending
            frm, to = pending.from_, pending.to
            self.rec.add(RetryEvent, from_=frm, to=to)
            self.loop.close_open_calls()
            if state.background:
                # Stopped (cancelled) while waiting for background tasks, or on the way to:
                # the redo goes on from the last event before the error, as after a crash.
                left = unfinished([e for e in recorded() if e.seq < pending.seq])
                if isinstance(left.last, MessageEvent):
                    await self._run(self._redo(left, frm, to))
                    return
            await self.run_from(frm, to)
            return
        if state.status != "running" or state.step is None:
            raise RunStateError(
                f"run {self.rec.run_id} is {state.status}: only a run stopped at an error "
                "(or left running by a process that stopped) can be retried"
            )
        left = unfinished(recorded())
        frm, to = state.step
        self.rec.add(RetryEvent, from_=frm, to=to)
        self.loop.close_open_calls()
        self.caller.recorded.extend(left.answers)
        try:
            await self._run(self._redo(left, frm, to))
        finally:
            self.caller.recorded.clear()

    # ------------------------------------------------------------------ chat

    async def run_from(self, frm: str, to: str) -> None:
        """Runs chat steps from ``chat(frm, to)`` until the run stops moving."""
        await self._run((frm, to))

    async def _run(self, step: Step) -> None:
        try:
            while True:
                await self._steps(step)
                if not self._held:
                    break
                self._held = False
                step = await self._deliver()
        except BudgetHalt:
            pass  # the budget ended the run or asks: its events are recorded
        self.rec.flush()

    async def _steps(self, step: Step) -> None:
        """Takes chat steps from ``step`` until the run stops moving."""
        state = self.state
        channels = self.flow.channels
        budget = self.budget
        while step is not None:
            frm, to = step
            before = state.next_seq
            if budget is not None:
                budget.before_step(frm)
            if frm in channels:
                turn = self._channel_turn(frm, to)
                chosen, by = turn.chosen, turn.by
                if chosen is not None and by is not None:  # no one to ask: nothing to await
                    step = self._selected(frm, turn.found, chosen, by, turn.routes)
                else:
                    step = await self._channel_speaks(frm, to, turn)
            else:  # an agent speaks (_agent_speaks, inlined: once per message)
                text = await self._reply(frm, to)
                if text is None:
                    step = None
                else:
                    data = self._data(frm, text) if frm in self._formats else None
                    self.rec.add_message(frm, to, text, data)
                    # A reply cut at the token limit is unfinished: it ends in no marker.
                    step = self._after_reply(frm, to, "" if self.caller.last_cut else text)
            if step is not None and state.next_seq == before:
                # Defensive: a step that records nothing would be taken again forever.
                raise RoostError(f"internal error: chat({frm}, {to}) made no progress")

    def _after_reply(self, frm: str, to: str, text: str) -> Step:
        """Section 3's checks after ``frm``'s reply to ``to``: end, pause, or go on."""
        word = marker_in(text, self._markers.get(frm, "end"))
        agents = self.flow.agents
        if word == TERMINATE:
            self._terminate(to, TERMINATE)
            return None
        if frm in agents and to in agents and self.state.pair_count(frm, to) >= self._max_rounds:
            self._terminate(to, "max_rounds")
            return None
        if word == INTERRUPT or to in self._humans:
            self._pause(to, frm)
            return None
        return (to, frm)

    def _channel_turn(self, channel: str, to: str) -> Turn:
        plan = self._plans.get(channel)
        if plan is None:
            plan = self._plans[channel] = ChannelPlan(self.flow, channel)
        if plan.routed:  # a flow without routes does not look further
            last = self.state.last_into.get(channel)
            if last in plan.routed:
                return self._routed_turn(channel, to, plan, last)
        return channel_turn(self.flow, self.state, channel, plan)

    def _routed_turn(self, channel: str, to: str, plan: ChannelPlan, last: str) -> Turn:
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
            self._fail(channel, to, str(exc))
            return Turn((), ended="error")
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

    def _data(self, frm: str, text: str) -> object:
        """The structured data of ``frm``'s reply (it has a reply_format), marker taken off."""
        data = reply_data(text)
        if data is None:
            data = reply_data(without_marker(text, self._markers.get(frm, "end")))
        return data

    async def _channel_speaks(self, channel: str, to: str, turn: Turn) -> Step:
        if turn.ended == "error":
            return None  # a route's python condition failed: recorded as an error
        if turn.ended is not None:
            self._terminate(channel, turn.ended, turn.routes)
            return None
        chosen, by = turn.chosen, turn.by
        if turn.ask == "manual":
            if self._holds():
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
        return self._selected(channel, turn.found, chosen, by, turn.routes)

    def _selected(
        self,
        channel: str,
        found: tuple[str, ...],
        chosen: str,
        by: By,
        routes: tuple[RouteRecord, ...] | None = None,
    ) -> Step:
        self.rec.add_select(channel, found, chosen, by, routes)
        return self._after_select(channel, chosen)

    def _after_select(self, channel: str, chosen: str) -> Step:
        """A member that always waits for a person pauses the run; any other speaks."""
        if chosen in self._humans:
            self._pause(chosen, channel)
            return None
        return (chosen, channel)

    def _manual_choice(
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

    def _after_resume(
        self, pending: InterruptEvent, feedback: str, images: tuple[ImageRecord, ...] = ()
    ) -> Step:
        """What follows a recorded ``resume`` of ``pending`` (docs/semantics.md, "continue
        and retry")."""
        frm, to = pending.from_, pending.to
        if pending.reason == "manual_select":
            chosen, found = self._manual_choice(frm, feedback, pending.routes)
            return self._selected(frm, found, chosen, "manual", pending.routes)
        if pending.reason in _TOOL_QUESTIONS:
            return (frm, to)  # the tool loop reads the answer from the state
        agents = self.flow.agents
        if frm in agents and to in agents and self.state.pair_count(frm, to) >= self._max_rounds:
            self._terminate(frm, "max_rounds")
            return None
        channel = self.flow.channels.get(frm)
        if channel is not None and channel_count(self.state, channel, frm) >= channel.max_rounds:
            # A member said INTERRUPT with the channel's last message: the cap ends it here.
            self._terminate(frm, "max_rounds")
            return None
        if feedback:
            self.rec.add(MessageEvent, from_=frm, to=to, content=feedback, images=images or None)
            if channel is not None and self.state.sent.get((to, frm), 0) >= self._max_rounds:
                # The member is at its own cap: it may not answer, the director picks on.
                return (frm, to)
            return (to, frm)
        return (frm, to)

    def _redo(self, left: Unfinished, frm: str, to: str) -> Step:
        """The step a stopped process had yet to take after the last event it recorded.

        ``(frm, to)`` is the step in progress; recorded model answers are used by the
        caller, and a tool round goes on from the state.
        """
        last, before = left.last, left.before
        if isinstance(last, MessageEvent):
            if last.background is not None:  # a background task's result: its agent answers
                return (last.to, last.from_)
            if before is None or isinstance(before, RunStartEvent):  # the start message
                if last.to in self._humans:
                    self._pause(last.to, last.from_)
                    return None
                return (last.to, last.from_)
            if isinstance(before, ResumeEvent):  # a person's feedback: the other answers
                return (last.to, last.from_)
            cut = isinstance(before, LlmCallEvent) and bool(before.response and before.response.cut)
            return self._after_reply(last.from_, last.to, "" if cut else last.content)
        if isinstance(last, SelectEvent):
            return self._after_select(last.channel, last.chosen)
        if isinstance(last, ResumeEvent) and isinstance(before, InterruptEvent):
            return self._after_resume(before, last.feedback, last.images or ())
        return (frm, to)

    # ------------------------------------------------------------------ reply

    async def _reply(self, frm: str, to: str) -> str | None:
        """The reply of agent ``frm`` to ``to``, or None when the run stopped or paused."""
        flow, state = self.flow, self.state
        agent = flow.agents.get(frm)
        if agent is None:
            self._fail(frm, to, f"no agent is called {frm!r}")
            return None
        provider = flow.provider_of(frm)
        if provider is None:
            self._fail(frm, to, f"agent {frm} has no provider (set provider or defaults.provider)")
            return None
        if state.turn.node != frm:  # a new reply, not one resumed mid-round
            incoming = self._incoming(frm, to)
            if incoming is not None:
                refusal = await self.hooks.before_reply(frm, incoming)
                if refusal is not None:
                    return refusal  # the model is not asked: the reason is the answer
        try:
            # The memory note and skills are in the request, so its digest covers them:
            # a replay sends the same.
            note, skills = self._memory_notes[frm], partial(self._skills_of, frm)
            system = system_prompt(flow, state, frm, to, note=note, skills=skills)
            # The message answered is only a query for the memory and the tools to offer.
            offers = bool(agent.functions or agent.skills)
            latest = self._latest_text(frm, to) if offers or flow.memory is not None else ""
            recalled = self._recall(frm, latest)
            seen = with_recall(seen_by(flow, state, frm, to, self.images), recalled)
            tools = self.tools_for(frm, latest) if offers else ()
        except Exception as exc:  # a failure here stops the run, never the process
            self._fail(frm, to, error_text(exc))
            return None
        limit = agent.max_tool_calls
        defaults = flow.defaults
        max_rounds = defaults.max_tool_calls if limit is None else limit
        if not tools and state.turn.node != frm:
            # The common reply: no tools and no round under way, so one model call.
            final = max_rounds <= 0
            shown = seen

            def build(changed: bool) -> tuple[ModelRequest, RequestDigest]:
                nonlocal shown
                if changed:  # compaction changed the view: built again
                    shown = with_recall(seen_by(flow, state, frm, to, self.images), recalled)
                request = model_request(system, shown.messages, (), frm)
                return request, request_digest(system, (), shown.digest, ())

            asker = Asker(frm, to, provider, fixed_chars(system, (), seen.context))
            response = await self.compactor.ask(asker, build, keep_calls=not final)
            if response is None:
                return None
            if final or not response.message.tool_calls:
                return response.message.content
            # It asked for tools it was not offered: the tool loop answers them with errors.
        job = Reply(
            agent=frm,
            to=to,
            provider=provider,
            system=system,
            seen=seen,
            tools=tools,
            max_rounds=max_rounds,
            result_limit=defaults.tool_result_limit,
            refresh=lambda: with_recall(seen_by(flow, state, frm, to, self.images), recalled),
            # A tool entry called memory hides the built-in memory tools.
            memory_scope=None if "memory" in flow.tools else flow.memory_scope(frm),
            plan=agent.approval == "plan",
            max_background=defaults.max_background,
            agent_max_background=agent.max_background,
            background_closed=self._at_cap(frm, to),
        )
        return await self.loop.run(job)

    def _skills_of(self, agent: str) -> tuple[SkillInfo, ...]:
        """The skills ``agent`` is shown, from those found now; a change is recorded first.

        The list its system prompt shows comes from the log (a ``skills`` event), so a
        replay, or a later step in another process, builds the same prompt.
        """
        state = self.state
        if state.turn.node == agent and state.skills is not None:
            # A reply resumed mid-round (after a tool approval) keeps the list it began with.
            return agent_skills(self.flow, agent, state.skills)
        # Masked as the event will be, so that a secret in a skill is not a change each time.
        found: tuple[SkillInfo, ...] = map_texts(self.skills(self.flow), self.redact)
        if found != state.skills:
            self.rec.add(SkillsEvent, skills=found)
        return agent_skills(self.flow, agent, found)

    def _recall(self, agent: str, latest: str) -> tuple[MemoryEntry, ...]:
        """The entries of ``agent``'s memory matching ``latest``, recorded as a ``memory`` event.

        Found once, before the reply's first request, and kept in the log, so that the
        requests of a replay (which reads the record, not the store) are the same. A
        reply resumed after a pause for approval, or retried, shows what was found then.
        """
        made = self.state.recall
        if made is not None and made.node == agent:
            return made.entries or ()
        config = self.flow.memory
        scope = self.flow.memory_scope(agent)
        if config is None or scope is None or self.memory is None or config.recall == 0:
            return ()
        if self.state.turn.node == agent:
            return ()  # resumed midway, and the recall before it found nothing: none now
        found = tuple(self.memory.recall(scope, latest, config.recall))
        if found:
            self.rec.add(
                MemoryEvent,
                node=agent,
                scope=scope,
                operation="recall",
                query=latest,
                entries=found,
            )
        return found

    def _latest_text(self, frm: str, to: str) -> str:
        """The message ``frm`` answers, as its before_reply hooks left it ('' if none)."""
        entry = self._incoming(frm, to)
        if entry is None:
            return ""
        rewrites = self.state.rewrites
        return rewrites.get((frm, entry.seq), entry.content) if rewrites else entry.content

    def _incoming(self, frm: str, to: str) -> HistoryEntry | None:
        """The latest message of the conversation ``frm`` answers that another wrote."""
        state = self.state
        thread = state.inbox_of(to) if to in self.flow.channels else state.pair_thread(frm, to)
        for index in reversed(thread.indices):
            entry = state.history[index]
            if entry.from_ != frm:
                return entry
        return None

    async def _ask_director(
        self, channel: str, to: str, found: tuple[str, ...]
    ) -> tuple[str, By] | None:
        flow, state = self.flow, self.state
        config = flow.channels[channel]
        provider = flow.provider_of(channel)
        if provider is None:
            self._fail(channel, to, f"the director of {channel} has no provider")
            return None
        try:
            context = role_context(flow, state, channel, list(config.members), channel)
            system = render(config.role, **context)
        except Exception as exc:  # a failure here stops the run, never the process
            self._fail(channel, to, error_text(exc))
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
            self._fail(channel, to, error_text(exc))
            return None

    # ------------------------------------------------------------------ endings

    def _fail(self, frm: str, to: str, message: str) -> None:
        self.rec.add(ErrorEvent, from_=frm, to=to, content=self.redact(message))
        self.rec.flush()

    def _pause(self, frm: str, to: str) -> None:
        if self._holds():
            return
        self.rec.add(InterruptEvent, from_=frm, to=to, reason="human")
        self.rec.flush()

    def _terminate(
        self, node: str, reason: str, routes: tuple[RouteRecord, ...] | None = None
    ) -> None:
        if self._holds():
            return
        self.rec.add(TerminateEvent, node=node, reason=reason, routes=routes)
        self.rec.flush()

    # ------------------------------------------------------------------ background tasks

    def _at_cap(self, frm: str, to: str) -> bool:
        """Whether ``frm``'s conversation with ``to`` has reached its ``max_rounds`` already.

        Only a reply to a background result delivered after the cap is made then; a
        task it started would keep the run going past its cap again and again, so none
        may start (the run ends after the reply, once the open results are delivered).
        """
        state = self.state
        if to in self.flow.agents:
            return state.pair_count(frm, to) >= self._max_rounds
        channel = self.flow.channels.get(to)
        return channel is not None and channel_count(state, channel, to) >= channel.max_rounds

    def _holds(self) -> bool:
        """Whether the run, about to pause or end, waits for background tasks first."""
        if not self.state.background or self.background is None:
            return False
        self._held = True
        return True

    async def _deliver(self) -> Step:
        """Waits for the first open background task to end and gives its result to its agent.

        The result is a message from whom the agent was answering when it started the
        task, so the agent answers it there, as it would any message.
        """
        assert self.background is not None  # only _holds sets _held, and it checks
        self.rec.flush()  # what came before the wait is in the log while the run waits
        finished = await self.background.next_finished(list(self.state.background.values()))
        task = finished.task
        self.rec.add(
            MessageEvent,
            from_=task.to,
            to=task.agent,
            content=delivery_text(finished),
            background=delivery_note(finished),
        )
        return (task.agent, task.to)
