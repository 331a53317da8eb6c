"""start, chat and reply (docs/semantics.md), as an explicit loop.

``chat(from, to)`` returns the next step instead of calling itself, and
``run_from`` iterates until the run pauses, stops at an error or terminates,
so a conversation of any length runs in constant stack depth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from roost.engine._channel_steps import ChannelSteps
from roost.engine._endings import Endings, Step
from roost.engine._replies import Replies, SkillsFor, ToolsFor
from roost.engine.background import BackgroundSource, delivery_note, delivery_text
from roost.engine.budget import BudgetHalt, BudgetKeeper, asked_budget, has_budget
from roost.engine.compaction import Asker, Compactor, context_sizes, fixed_chars
from roost.engine.hooks import HookRecorder, HooksFor, no_hooks
from roost.engine.images import LoadedImage
from roost.engine.routes import LiveRoutes, RouteJudge, reply_data
from roost.engine.tool_loop import ToolLoop
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
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    SelectEvent,
)
from roost.flow.markers import INTERRUPT, TERMINATE, MarkerRule, marker_in
from roost.flow.skills import current_catalogue
from roost.flow.start_message import render_start
from roost.nodes.agent import shown_skills, system_prompt
from roost.nodes.directors import channel_count
from roost.nodes.human import check_self_answer, is_human
from roost.runstate import without_marker

if TYPE_CHECKING:
    from roost.engine.calls import ModelCaller
    from roost.engine.recorder import Recorder
    from roost.flow.models import Flow
    from roost.flow.redact import Redactor
    from roost.nodes.agent import ImageSource
    from roost.ports import MemoryBank

# Interrupts that ask a person about tool calls: the answer is read by the tool loop.
_TOOL_QUESTIONS = ("tool_approval", "tool_plan")
KeepImages = Callable[[Sequence[LoadedImage | ImageRecord]], tuple[ImageRecord, ...]]


def _records_only(images: Sequence[LoadedImage | ImageRecord]) -> tuple[ImageRecord, ...]:
    """Images as records, for an interpreter with nowhere to keep them."""
    return tuple(image.record() if isinstance(image, LoadedImage) else image for image in images)


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
        # The agents whose replies are JSON (reply_format): their data is recorded.
        self._formats = frozenset(n for n, a in flow.agents.items() if a.reply_format is not None)
        # Keeps a message's images in the run's store, once the message is sure to be recorded.
        self._keep_images: KeepImages = keep_images or _records_only
        self.rec = recorder
        self.state = recorder.state
        self.caller = caller
        self.ends = Endings(recorder, redact, background)
        self.compactor = Compactor(flow, recorder, caller, memory)
        self.hooks = HookRecorder(recorder, hooks or no_hooks)
        self.loop = ToolLoop(recorder, self.compactor, redact, self.hooks)
        self._flow_record = flow_record
        self._max_rounds = flow.defaults.max_rounds
        # Fixed for the whole run, so looked up once rather than at every turn.
        self._humans = frozenset(name for name in flow.agents if is_human(flow, name))
        self._markers: dict[str, MarkerRule] = {name: flow.markers_of(name) for name in flow.agents}
        self.replies = self._replies(tools_for, skills, memory, images)
        self.channel_steps = ChannelSteps(
            flow=flow,
            recorder=recorder,
            caller=caller,
            routes=routes or LiveRoutes(flow),
            ends=self.ends,
            markers=self._markers,
            humans=self._humans,
        )
        self.budget: BudgetKeeper | None = None
        self.keep_budget()

    def _replies(
        self,
        tools_for: ToolsFor,
        skills: SkillsFor | None,
        memory: MemoryBank | None,
        images: ImageSource | None,
    ) -> Replies:
        """The agents' replies, made through this run's tool loop and endings."""
        return Replies(
            flow=self.flow,
            loop=self.loop,
            ends=self.ends,
            tools_for=tools_for,
            skills=skills or current_catalogue,
            memory=memory,
            images=images,
        )

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
        self.ends.held = False
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
            self.ends.pause(to, frm)
            return
        await self.run_from(to, frm)

    async def continue_(
        self, feedback: str, images: Sequence[LoadedImage | ImageRecord] = ()
    ) -> None:
        """Answers the pending interrupt with ``feedback`` and ``images`` (docs/semantics.md,
        "continue and retry")."""
        self.ends.held = False
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
            self.channel_steps.person_choice(pending.from_, feedback, pending.routes)
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
            self.ends.terminate(pending.to, "budget")
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
                note=self.replies.notes[size.node],
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
        self.ends.held = False
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
                if not self.ends.held:
                    break
                self.ends.held = False
                step = await self._deliver()
        except BudgetHalt:
            pass  # the budget ended the run or asks: its events are recorded
        self.rec.flush()

    async def _steps(self, step: Step) -> None:
        """Takes chat steps from ``step`` until the run stops moving."""
        state = self.state
        channels = self.flow.channels
        channel_steps, replies = self.channel_steps, self.replies
        budget = self.budget
        while step is not None:
            frm, to = step
            before = state.next_seq
            if budget is not None:
                budget.before_step(frm)
            if frm in channels:
                turn = channel_steps.turn(frm, to)
                chosen, by = turn.chosen, turn.by
                if chosen is not None and by is not None:  # no one to ask: nothing to await
                    step = channel_steps.selected(frm, turn.found, chosen, by, turn.routes)
                else:
                    step = await channel_steps.speaks(frm, to, turn)
            else:  # an agent speaks (_agent_speaks, inlined: once per message)
                said = await replies.reply(frm, to)
                if said is None:
                    step = None
                else:
                    text = said.text
                    data = self._data(frm, text) if frm in self._formats else None
                    self.rec.add_message(frm, to, text, data)
                    # A reply cut at the token limit is unfinished: it ends in no marker.
                    step = self._after_reply(frm, to, "" if said.cut else text)
            if step is not None and state.next_seq == before:
                # Defensive: a step that records nothing would be taken again forever.
                raise RoostError(f"internal error: chat({frm}, {to}) made no progress")

    def _after_reply(self, frm: str, to: str, text: str) -> Step:
        """Section 3's checks after ``frm``'s reply to ``to``: end, pause, or go on."""
        word = marker_in(text, self._markers.get(frm, "end"))
        agents = self.flow.agents
        if word == TERMINATE:
            self.ends.terminate(to, TERMINATE)
            return None
        if frm in agents and to in agents and self.state.pair_count(frm, to) >= self._max_rounds:
            self.ends.terminate(to, "max_rounds")
            return None
        if word == INTERRUPT or to in self._humans:
            self.ends.pause(to, frm)
            return None
        return (to, frm)

    def _data(self, frm: str, text: str) -> object:
        """The structured data of ``frm``'s reply (it has a reply_format), marker taken off."""
        data = reply_data(text)
        if data is None:
            data = reply_data(without_marker(text, self._markers.get(frm, "end")))
        return data

    def _after_resume(
        self, pending: InterruptEvent, feedback: str, images: tuple[ImageRecord, ...] = ()
    ) -> Step:
        """What follows a recorded ``resume`` of ``pending`` (docs/semantics.md, "continue
        and retry")."""
        frm, to = pending.from_, pending.to
        if pending.reason == "manual_select":
            chosen, found = self.channel_steps.person_choice(frm, feedback, pending.routes)
            return self.channel_steps.selected(frm, found, chosen, "manual", pending.routes)
        if pending.reason in _TOOL_QUESTIONS:
            return (frm, to)  # the tool loop reads the answer from the state
        agents = self.flow.agents
        if frm in agents and to in agents and self.state.pair_count(frm, to) >= self._max_rounds:
            self.ends.terminate(frm, "max_rounds")
            return None
        channel = self.flow.channels.get(frm)
        if channel is not None and channel_count(self.state, channel, frm) >= channel.max_rounds:
            # A member said INTERRUPT with the channel's last message: the cap ends it here.
            self.ends.terminate(frm, "max_rounds")
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
                    self.ends.pause(last.to, last.from_)
                    return None
                return (last.to, last.from_)
            if isinstance(before, ResumeEvent):  # a person's feedback: the other answers
                return (last.to, last.from_)
            cut = isinstance(before, LlmCallEvent) and bool(before.response and before.response.cut)
            return self._after_reply(last.from_, last.to, "" if cut else last.content)
        if isinstance(last, SelectEvent):
            return self.channel_steps.after_select(last.channel, last.chosen)
        if isinstance(last, ResumeEvent) and isinstance(before, InterruptEvent):
            return self._after_resume(before, last.feedback, last.images or ())
        return (frm, to)

    # ------------------------------------------------------------------ background tasks

    async def _deliver(self) -> Step:
        """Waits for the first open background task to end and gives its result to its agent.

        The result is a message from whom the agent was answering when it started the
        task, so the agent answers it there, as it would any message.
        """
        background = self.ends.background
        assert background is not None  # only Endings.holds sets held, and it checks
        self.rec.flush()  # what came before the wait is in the log while the run waits
        finished = await background.next_finished(list(self.state.background.values()))
        task = finished.task
        self.rec.add(
            MessageEvent,
            from_=task.to,
            to=task.agent,
            content=delivery_text(finished),
            background=delivery_note(finished),
        )
        return (task.agent, task.to)
