"""Keeping every model request inside its model's context window.

Before each call of an agent, the request's tokens are estimated (the view's
latest reported size plus what was added since, ``roost.context_window``). Above
``defaults.compress_at`` of the window, the agent's view of the conversation
is compressed in stages until it fits well under that line:

- ``trim``: long tool results and plain reasoning of the reply's earlier tool
  rounds are cut to a note;
- ``summary``: the older entries (all but the first and the latest) are
  replaced by a summary that the node's provider, or
  ``defaults.summary_provider``, writes (its ``llm_call`` is recorded with
  ``purpose: summary``);
- ``cut``: when the request is still above ``defaults.compress_hard_at`` of
  the window, or the summary could not be written, the older entries are left
  out and a note says how many.

Each stage is a ``compact`` event that the fold applies to the view, so the
next request, a run continued elsewhere and a replay all see the same. In a
flow with ``memory: {timeline: true}``, each summary also becomes a timeline
entry of the agent's memory (a ``memory`` event, and kept in the memory bank). A model
that refuses a request as too long gets the stages run again, down to half
the request's estimated size, and one more try; only a second refusal stops
the run at an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from roost.context_window import SUMMARY_HEAD, ViewBase, estimate, trimmable
from roost.engine.calls import ModelCaller, Overflowed
from roost.engine.digests import RequestDigest, request_digest
from roost.engine.recorder import Recorder, build_event
from roost.events import CompactEvent, ErrorEvent, MemoryEvent, TimelineEntry
from roost.flow.models import Flow, ScriptedProviderConfig
from roost.messages import ModelRequest, ModelResponse, ToolSpec, UserMessage
from roost.nodes.agent import memory_note, shown_skills, system_prompt
from roost.nodes.roles import render
from roost.pricing import context_window_of

if TYPE_CHECKING:
    from roost.ports import MemoryBank
    from roost.runstate import RunState

# After compressing, a request is brought down to this share of the compress_at line, so
# that the turns that follow fit without compressing again at once.
GOAL_SHARE = 0.5
# What a summary may take of the window, in tokens (it is asked for in words).
SUMMARY_SHARE = 0.1
SUMMARY_TOKENS = (100, 2000)

SUMMARY_PROMPT = """\
Summarise the conversation below for {{ name }}, who takes part in it and will go on \
from your summary instead of these messages. Keep what was decided or agreed, facts, \
numbers, names, open questions and what was asked last; leave out greetings and small \
talk. Write at most {{ words }} words of plain text, in the conversation's language.
{% if summary %}
The summary of what came before:
{{ summary }}
{% endif %}{% if left_out %}
({{ left_out }} earlier messages are too long to show here.)
{% endif %}
The conversation{% if summary %} since{% endif %}:
{% for message in messages %}@{{ message.from }}: {{ message.content }}
{% endfor %}"""

Build = Callable[[bool], tuple[ModelRequest, RequestDigest]]


@dataclass(frozen=True, slots=True)
class Asker:
    """One request of an agent: whose view, whom it answers, through which provider.

    ``fixed`` counts the characters of the request that compaction never changes:
    the system prompt, the tools offered and the context files.
    """

    node: str
    to: str
    provider: str
    fixed: int


def fixed_chars(system: str, tools: Sequence[ToolSpec] = (), context: str = "") -> int:
    """The characters of a request's part that compaction leaves as it is."""
    total = len(system) + len(context)
    for tool in tools:
        total += len(tool.name) + len(tool.description) + len(str(tool.parameters))
    return total


class Compactor:
    """Fits an agent's requests to its model's window, compressing its view when needed."""

    def __init__(
        self,
        flow: Flow,
        recorder: Recorder,
        caller: ModelCaller,
        memory: MemoryBank | None = None,
    ) -> None:
        self.flow = flow
        self.rec = recorder
        self.state: RunState = recorder.state
        self.caller = caller
        self.memory = memory  # where summaries are kept as timeline entries
        self._windows: dict[str, int | None] = {}

    def window(self, provider: str) -> int | None:
        """The tokens ``provider``'s model sees at most; None: no limit (a scripted provider
        that sets no ``context_window``). A limit its server named in a refusal wins."""
        limit = self._table_window(provider)
        learned = self.state.windows.get(provider)
        return limit if learned is None or limit is None else min(limit, learned)

    def _table_window(self, provider: str) -> int | None:
        if provider not in self._windows:
            config = self.flow.providers.get(provider)
            limit: int | None = None
            if config is not None and not (
                isinstance(config, ScriptedProviderConfig) and config.context_window is None
            ):
                limit = context_window_of(config)
            self._windows[provider] = limit
        return self._windows[provider]

    def estimate(self, asker: Asker, base: ViewBase | None = None) -> int:
        """The estimated tokens of ``asker``'s request (as ``base`` would leave the view)."""
        state = self.state
        chars = state.view_chars(asker.node, asker.to, base)
        anchor = state.views.get((asker.node, asker.to))
        return estimate(anchor, chars, asker.fixed, state.chars_per_token(asker.provider))

    async def ask(
        self, asker: Asker, build: Build, *, keep_calls: bool = True
    ) -> ModelResponse | None:
        """The model's answer to the request ``build`` makes, fitted to the window first.

        ``build(changed)`` makes the request from the state; ``changed`` says the view
        was compressed since it was last built. None: the run stopped at an error.
        """
        window = self.window(asker.provider)
        changed = await self.fit(asker) if window is not None else False
        request, digest = build(changed)
        route = (asker.node, asker.to)
        call = self.caller.call_or_overflow if window is not None else self.caller.call
        answer = await call(
            asker.node, asker.provider, request, digest, route, keep_calls=keep_calls
        )
        if not isinstance(answer, Overflowed):
            return answer
        if not await self.fit(asker, overflow=True):
            self._fail(asker, answer.message)  # nothing left to compress: the refusal stands
            return None
        request, digest = build(True)
        return await self.caller.call(
            asker.node, asker.provider, request, digest, route, keep_calls=keep_calls
        )

    async def fit(self, asker: Asker, *, overflow: bool = False, force: bool = False) -> bool:
        """Compresses ``asker``'s view until its request fits; whether anything changed.

        ``overflow``: the model refused the request, so it is brought down to half
        its estimated size. ``force``: compressed whatever its size (``/compact``).
        """
        window = self.window(asker.provider)
        if window is None:
            if not force:
                return False
            window = context_window_of(None)
        defaults = self.flow.defaults
        line = defaults.compress_at * window
        before = self.estimate(asker)
        if overflow or force:
            target = min(line * GOAL_SHARE, before / 2)
        elif before <= line:
            return False
        else:
            target = line * GOAL_SHARE
        changed = self._trim(asker)
        if changed and self.estimate(asker) <= target:
            return True
        summarised = await self._summarise(asker, window, target)
        changed = changed or summarised is not None
        # A refused request must shrink whatever the summary left; /compact keeps the summary.
        hard = target if overflow else defaults.compress_hard_at * window
        if summarised is False or self.estimate(asker) > hard:
            changed = self._cut(asker, target) or changed
        return changed

    # ------------------------------------------------------------------ the stages

    def _trim(self, asker: Asker) -> bool:
        turn = self.state.turn
        if turn.node != asker.node or not turn.messages:
            return False
        through = trimmable(turn.messages, turn.seqs)
        base = self._base(asker)
        if through <= base.trimmed:
            return False
        return self._record(asker, "trim", through, None, replace(base, trimmed=through))

    async def _summarise(self, asker: Asker, window: int, target: float) -> bool | None:
        """True: summarised; False: the summary could not be written; None: nothing to do."""
        state = self.state
        base = self._base(asker)
        thread = state.conversation(asker.node, asker.to)
        start = max(base.covered, 1)  # the first entry is always shown
        last = len(thread.indices) - 1  # the latest entry too
        if last - start < 1:
            return None
        tokens = _summary_tokens(window)
        # Room for the summary to come, in characters, while choosing what it replaces.
        allowance = "x" * int(tokens * state.chars_per_token(asker.provider))
        covered = self._cover(asker, start + 1, last, target, ViewBase(summary=allowance))
        history = state.history
        entries = [history[i] for i in thread.indices[start:covered]]
        summary = await self._write_summary(asker, entries, base, tokens * 3 // 4)
        if summary is None:
            return False
        through = history[thread.indices[covered - 1]].seq
        after = replace(base, covered=covered, through=through, summary=summary)
        # A summary longer than what it replaces is not used (its call stays recorded).
        return self._record(asker, "summary", through, summary, after) or None

    def _cut(self, asker: Asker, target: float) -> bool:
        state = self.state
        base = self._base(asker)
        thread = state.conversation(asker.node, asker.to)
        start = max(base.covered, 1)
        last = len(thread.indices) - 1
        if last - start >= 1:
            covered = self._cover(asker, start + 1, last, target, ViewBase())
        elif base.summary is not None and base.covered > 1:
            covered = base.covered  # the summary itself is what goes
        else:
            return False
        through = state.history[thread.indices[covered - 1]].seq
        after = replace(base, covered=covered, through=through, summary=None)
        return self._record(asker, "cut", through, None, after)

    def _cover(self, asker: Asker, low: int, high: int, target: float, shape: ViewBase) -> int:
        """The fewest entries to cover (between ``low`` and ``high``) for the request to fit
        under ``target`` tokens, with ``shape``'s placeholder standing for them; ``high``
        when even that is not enough."""
        base = self._base(asker)
        while low < high:
            middle = (low + high) // 2
            trial = replace(base, covered=middle, summary=shape.summary)
            if self.estimate(asker, trial) <= target:
                high = middle
            else:
                low = middle + 1
        return high

    async def _write_summary(
        self, asker: Asker, entries: list[Any], base: ViewBase, words: int
    ) -> str | None:
        """The summary of ``entries`` (and of the summary before them), or None when the call
        failed (recorded as its ``llm_call``) or the answer was empty."""
        flow = self.flow
        provider = flow.defaults.summary_provider or asker.provider
        window = self.window(provider) or context_window_of(None)
        room = int(flow.defaults.compress_at * window * self.state.chars_per_token(provider))
        shown: list[dict[str, str]] = []
        for entry in reversed(entries):  # the latest first: the oldest go when room runs out
            room -= len(entry.content) + len(entry.from_) + 4
            if room < 0 and shown:
                break
            shown.append({"from": entry.from_, "content": entry.content})
        shown.reverse()
        previous = base.summary if base.covered > 1 else None
        prompt = render(
            flow.defaults.summary_prompt or SUMMARY_PROMPT,
            vars=flow.vars,
            name=asker.node,
            words=words,
            summary=previous,
            messages=shown,
            left_out=len(entries) - len(shown),
        )
        messages = [UserMessage(content=prompt)]
        request = build_event(
            ModelRequest,
            {"system": "", "messages": tuple(messages), "tools": (), "node": asker.node},
        )
        digest = request_digest("", (), b"", messages)
        answer = await self.caller.summary(asker.node, provider, request, digest)
        if not isinstance(answer, ModelResponse):
            return None
        text = answer.message.content.strip()
        return text or None

    # ------------------------------------------------------------------ records

    def _base(self, asker: Asker) -> ViewBase:
        return self.state.views.get((asker.node, asker.to)) or ViewBase()

    def _record(
        self, asker: Asker, stage: str, through: int, summary: str | None, after: ViewBase
    ) -> bool:
        """Records the stage that leaves the view as ``after``; whether it did. A stage
        that would not shrink the request is not made (nothing is recorded)."""
        before = self.estimate(asker)
        tokens_after = self.estimate(asker, after)
        if tokens_after >= before:
            return False
        compact = self.rec.add(
            CompactEvent,
            node=asker.node,
            to=asker.to,
            through=through,
            stage=stage,
            summary=summary,
            tokens_before=before,
            tokens_after=tokens_after,
        )
        if compact.summary is not None:  # as recorded: secrets masked
            self._keep_timeline(asker.node, compact.ts, compact.summary)
        return True

    def _keep_timeline(self, node: str, at: str, summary: str) -> None:
        """A summary of ``node``'s view as a timeline entry of its memory, when the flow
        keeps a timeline.

        The ``memory`` event is recorded whether or not a bank keeps the entry, so a
        replay (whose bank keeps nothing) records the same events.
        """
        config = self.flow.memory
        scope = self.flow.memory_scope(node)
        if config is None or not config.timeline or scope is None:
            return
        entry = TimelineEntry(at=at, run=self.rec.run_id, summary=summary)
        self.rec.add(MemoryEvent, node=node, scope=scope, operation="timeline", timeline=entry)
        if self.memory is not None:
            self.memory.keep_timeline(scope, entry)

    def _fail(self, asker: Asker, message: str) -> None:
        self.rec.add(ErrorEvent, from_=asker.node, to=asker.to, content=message)
        self.rec.flush()


@dataclass(frozen=True, slots=True)
class ContextSize:
    """An agent's latest view: whom it answered, its request's estimated tokens, its window."""

    node: str
    to: str
    tokens: int
    window: int

    def text(self) -> str:
        """``a → b: ~1,234 of 128,000 tokens (1%)``."""
        share = 100 * self.tokens / self.window if self.window else 0
        return f"{self.node} → {self.to}: ~{self.tokens:,} of {self.window:,} tokens ({share:.0f}%)"


def context_sizes(flow: Flow, state: RunState) -> list[ContextSize]:
    """Each agent's current context: its view of the conversation it answered last, as
    compaction left it, estimated as before its next call, against its model's window."""
    latest: dict[str, str] = {}
    for entry in state.history:
        if entry.state == "success" and entry.from_ in flow.agents:
            latest[entry.from_] = entry.to
    found = []
    for node, to in latest.items():
        provider = flow.provider_of(node)
        config = flow.providers.get(provider) if provider else None
        if provider is None or config is None or flow.interrupt_of(node) == "ALWAYS":
            continue  # a person answers for it: it makes no model call
        skills = partial(shown_skills, flow, state, node)
        note = memory_note(flow, node)
        system = system_prompt(flow, state, node, to, note=note, skills=skills, strict=False)
        anchor = state.views.get((node, to))
        chars = state.view_chars(node, to)
        tokens = estimate(anchor, chars, len(system), state.chars_per_token(provider))
        window = context_window_of(config)
        learned = state.windows.get(provider)  # the limit its server named, when it did
        found.append(ContextSize(node, to, tokens, min(window, learned or window)))
    return found


def _summary_tokens(window: int) -> int:
    low, high = SUMMARY_TOKENS
    return max(low, min(high, int(window * SUMMARY_SHARE)))


__all__ = ["SUMMARY_HEAD", "Asker", "Compactor", "ContextSize", "context_sizes", "fixed_chars"]
