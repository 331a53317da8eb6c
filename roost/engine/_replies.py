"""An agent's reply: its request made from the run's state, then one model call, or the
tool loop when it is offered tools or a round of tool calls is under way.

Before the first request, the message answered goes through the agent's
before_reply hooks, its memory is recalled and the skills it is shown are
recorded: each once per reply and kept in the log, so that a replay, or the
reply resumed in another process, sends the same requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from roost.engine.calls import error_text, request_digest
from roost.engine.compaction import Asker, fixed_chars
from roost.engine.recorder import model_request
from roost.engine.tool_loop import ReplyJob, Said
from roost.events import MemoryEntry, MemoryEvent, SkillInfo, SkillsEvent, map_texts
from roost.flow.skills import agent_skills
from roost.nodes.agent import memory_note, seen_by, system_prompt, with_recall
from roost.nodes.directors import channel_count

if TYPE_CHECKING:  # roost.tools is imported only by flows that have tools
    from roost.engine._endings import Endings
    from roost.engine.digests import RequestDigest
    from roost.engine.tool_loop import ToolLoop
    from roost.flow.models import Agent, Flow
    from roost.messages import ModelRequest, ModelResponse
    from roost.nodes.agent import ImageSource, Seen
    from roost.ports import MemoryBank
    from roost.runstate import HistoryEntry
    from roost.tools.base import Tool

ToolsFor = Callable[[str, str], Sequence["Tool"]]
# The skills a flow's agents may use, as found now (or as a replay's record says).
SkillsFor = Callable[["Flow"], tuple[SkillInfo, ...]]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What every request of one reply is made of: its system prompt, the memory recalled
    for it, the history the agent is shown, and the tools it is offered."""

    system: str
    recalled: tuple[MemoryEntry, ...]
    seen: Seen
    tools: Sequence[Tool]


class Replies:
    """Makes the replies of a flow's agents in one run."""

    def __init__(
        self,
        *,
        flow: Flow,
        loop: ToolLoop,
        ends: Endings,
        tools_for: ToolsFor,
        skills: SkillsFor,
        memory: MemoryBank | None = None,
        images: ImageSource | None = None,
    ) -> None:
        self.flow = flow
        # The tool loop makes the replies that call tools; its recorder, compactor, hooks
        # and masking serve the replies that call none too.
        self.loop = loop
        self.rec, self.compactor, self.hooks = loop.recorder, loop.compactor, loop.hooks
        self.redact = loop.redact
        self.state = self.rec.state
        self.ends = ends
        self.tools_for = tools_for
        self.skills = skills
        # Each agent's memory note (its system prompt shows it), fixed for the run.
        self.notes = {name: memory_note(flow, name) for name in flow.agents}
        self.memory = memory
        self.images = images  # the bytes of the images messages carry, by their records
        self._max_rounds = flow.defaults.max_rounds

    async def reply(self, frm: str, to: str) -> Said | None:
        """The reply of agent ``frm`` to ``to``, or None when the run stopped or paused."""
        flow, state = self.flow, self.state
        agent = flow.agents.get(frm)
        if agent is None:
            self.ends.fail(frm, to, f"no agent is called {frm!r}")
            return None
        provider = flow.provider_of(frm)
        if provider is None:
            self.ends.fail(
                frm, to, f"agent {frm} has no provider (set provider or defaults.provider)"
            )
            return None
        if state.turn.node != frm:  # a new reply, not one resumed mid-round
            incoming = self._incoming(frm, to)
            if incoming is not None:
                refusal = await self.hooks.before_reply(frm, incoming)
                if refusal is not None:
                    return Said(refusal)  # the model is not asked: the reason is the answer
        prepared = self._prepare(frm, to, agent)
        if prepared is None:
            return None
        limit = agent.max_tool_calls
        max_rounds = flow.defaults.max_tool_calls if limit is None else limit
        if not prepared.tools and state.turn.node != frm:
            # The common reply: no tools and no round under way, so one model call.
            final = max_rounds <= 0
            response = await self._ask_once(frm, to, provider, prepared, final)
            if response is None:
                return None
            if final or not response.message.tool_calls:
                return Said(response.message.content, response.cut)
            # It asked for tools it was not offered: the tool loop answers them with errors.
        return await self.loop.run(self._job(frm, to, provider, prepared, max_rounds))

    def _prepare(self, frm: str, to: str, agent: Agent) -> _Prepared | None:
        """What the reply's requests are made of; None when making it failed (the run stopped
        at an error)."""
        flow, state = self.flow, self.state
        try:
            # The memory note and skills are in the request, so its digest covers them:
            # a replay sends the same.
            note, skills = self.notes[frm], partial(self._skills_of, frm)
            system = system_prompt(flow, state, frm, to, note=note, skills=skills)
            # The message answered is only a query for the memory and the tools to offer.
            offers = bool(agent.functions or agent.skills)
            latest = self._latest_text(frm, to) if offers or flow.memory is not None else ""
            recalled = self._recall(frm, latest)
            seen = self._seen(frm, to, recalled)
            tools = self.tools_for(frm, latest) if offers else ()
        except Exception as exc:  # a failure here stops the run, never the process
            self.ends.fail(frm, to, error_text(exc))
            return None
        return _Prepared(system, recalled, seen, tools)

    def _seen(self, frm: str, to: str, recalled: tuple[MemoryEntry, ...]) -> Seen:
        """What ``frm`` is shown when it answers ``to``, with the memory recalled for it."""
        return with_recall(seen_by(self.flow, self.state, frm, to, self.images), recalled)

    async def _ask_once(
        self, frm: str, to: str, provider: str, prepared: _Prepared, final: bool
    ) -> ModelResponse | None:
        """The model's answer to a request that offers no tools; None: the run stopped."""
        system = prepared.system
        shown = prepared.seen

        def build(changed: bool) -> tuple[ModelRequest, RequestDigest]:
            nonlocal shown
            if changed:  # compaction changed the view: built again
                shown = self._seen(frm, to, prepared.recalled)
            request = model_request(system, shown.messages, (), frm)
            return request, request_digest(system, (), shown.digest, ())

        asker = Asker(frm, to, provider, fixed_chars(system, (), prepared.seen.context))
        return await self.compactor.ask(asker, build, keep_calls=not final)

    def _job(
        self, frm: str, to: str, provider: str, prepared: _Prepared, max_rounds: int
    ) -> ReplyJob:
        """The reply as the tool loop makes it: the request's parts, and its limits."""
        flow = self.flow
        agent, defaults, recalled = flow.agents[frm], flow.defaults, prepared.recalled
        return ReplyJob(
            agent=frm,
            to=to,
            provider=provider,
            system=prepared.system,
            seen=prepared.seen,
            tools=prepared.tools,
            max_rounds=max_rounds,
            result_limit=defaults.tool_result_limit,
            refresh=lambda: self._seen(frm, to, recalled),
            # A tool entry called memory hides the built-in memory tools.
            memory_scope=None if "memory" in flow.tools else flow.memory_scope(frm),
            plan=agent.approval == "plan",
            max_background=defaults.max_background,
            agent_max_background=agent.max_background,
            background_closed=self._at_cap(frm, to),
        )

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
