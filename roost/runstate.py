"""A run's state as a pure function of its events.

``fold(events)`` builds a ``RunState`` from nothing; ``apply(state, event)``
advances one in place. The live engine keeps its state only by applying each
event it records, so what a process sees while running and what another
process folds from the log are the same thing by construction.

A run's status depends on its previous status and the type of each event
alone (``STATUS_AFTER``), so a reader that keeps only the status (the store's
run list) advances it with ``status_after`` and agrees with the fold.

Everything the interpreter asks per turn is kept incrementally here, so no
turn rescans the history: message counts per (from, to), the last sender into
each node, per-node and per-pair lists of history indices, and a digest
chained message by message over each of those lists.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from hashlib import sha256
from typing import TYPE_CHECKING, Any, Literal

from roost.context_window import (
    ENTRY_OVERHEAD,
    IMAGE_CHARS,
    Calibration,
    ViewBase,
    limit_in,
    tail_chars,
    thread_chars,
)
from roost.errors import CONTEXT_TOO_LONG
from roost.events import (
    BackgroundEvent,
    BudgetEvent,
    CompactEvent,
    ErrorEvent,
    Event,
    FlowEvent,
    HookEvent,
    InterruptEvent,
    LlmResponse,
    LlmUsage,
    MemoryEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    SkillInfo,
    SkillsEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from roost.flow.markers import MarkerRule, marker_in
from roost.messages import (
    AssistantMessage,
    ReasoningPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    distinct_ids,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

Status = Literal["new", "running", "paused", "error", "terminated"]
_EMPTY_DIGEST = b""

# The status a run is in right after an event of each type. Any other type (run_start,
# flow, llm_call, tool_call, tool_result, and types added later) leaves it as it was:
# a run that has only started is "new", a change of flow or a model call after the run
# terminated changes nothing.
STATUS_AFTER: dict[str, Status] = {
    "message": "running",
    "select": "running",
    "resume": "running",
    "retry": "running",
    "interrupt": "paused",
    "error": "error",
    "terminate": "terminated",
}


def status_after(status: Status, event_type: str) -> Status:
    """The status of a run in ``status`` once an event of ``event_type`` is applied."""
    return STATUS_AFTER.get(event_type, status)


# One entry of the history: who said what to whom, and whether it succeeded
# (``from_``, ``to``, ``content``, ``state``, ``seq``, ``ts``). The entries are the
# log's own events, so the history costs no object of its own per message.
HistoryEntry = MessageEvent | InterruptEvent | ErrorEvent


@dataclass
class Thread:
    """An append-only list of history indices with a digest chained over them.

    ``sizes`` holds the running sum of the entries' sizes (``roost.context_window.entry_size``),
    so that a view's size is known without measuring the history again.
    """

    indices: list[int] = field(default_factory=list)
    digest: bytes = _EMPTY_DIGEST
    sizes: list[int] = field(default_factory=list)
    # The entries' recorded times, chained likewise, for the requests of flows that show
    # them (defaults.timestamps): worked out when first asked, then only for new entries.
    _times: bytes = field(default=_EMPTY_DIGEST, compare=False, repr=False)
    _timed: int = field(default=0, compare=False, repr=False)
    # The entries as transcript lines (a director's view of a channel), likewise made
    # only for the entries added since last asked: a long run's prompts stay linear.
    _lines: list[str] = field(default_factory=list, compare=False, repr=False)
    _text: str = field(default="", compare=False, repr=False)

    def add(self, index: int, payload: bytes, size: int = 0) -> None:
        """Appends a history index; ``payload`` is the entry's bytes for the digest chain."""
        self.indices.append(index)
        self.digest = sha256(self.digest + payload).digest()
        sizes = self.sizes
        sizes.append(size + (sizes[-1] if sizes else 0))

    def times_digest(self, history: Sequence[HistoryEntry]) -> bytes:
        """A digest chained over the recorded times (``ts``) of the thread's entries."""
        indices = self.indices
        if self._timed < len(indices):
            times = self._times
            for index in indices[self._timed :]:
                times = sha256(times + history[index].ts.encode()).digest()
            self._times, self._timed = times, len(indices)
        return self._times

    def lines(
        self, history: Sequence[HistoryEntry], line: Callable[[HistoryEntry], str]
    ) -> tuple[list[str], str]:
        """The entries as ``line`` shows them, and those lines joined (each ends in a newline).

        ``line`` must be the same function every time one thread is asked (the lines
        of the entries already shown are kept, not made again). The list is the
        thread's own: a caller that changes it must copy it first.
        """
        indices, lines = self.indices, self._lines
        if len(lines) < len(indices):
            new = [line(history[index]) for index in indices[len(lines) :]]
            lines += new
            self._text += "".join([text + "\n" for text in new])
        return lines, self._text


# What readers get for a thread no message has started yet; never written to.
_NO_THREAD = Thread()
EMPTY_THREAD = _NO_THREAD  # what a node nobody has written to reads (never modified)


@dataclass
class Turn:
    """The reply in progress: the tool loop's messages since the node last spoke."""

    node: str = ""
    messages: list[AssistantMessage | ToolResultMessage] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)  # the seq of the event of each message
    rounds: int = 0
    open_calls: dict[str, ToolCallEvent] = field(default_factory=dict)
    decisions: dict[str, str] = field(default_factory=dict)  # tool call id -> approval answer
    awaiting: set[str] = field(default_factory=set)  # ids of the latest round without a result
    # before_tool hooks, by tool call id (a step going on after a pause asks none again): how
    # many have decided, the arguments they changed the call to, the reason one refused it.
    hooked: dict[str, int] = field(default_factory=dict)
    changed: dict[str, dict[str, Any]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def last_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of the latest model answer in this turn, if any."""
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return message.tool_calls
        return ()

    def result_ids(self) -> set[str]:
        """Ids of the calls of this turn that have a result."""
        return {m.tool_call_id for m in self.messages if isinstance(m, ToolResultMessage)}


@dataclass
class Spent:
    """What a node (or the run's sub-flows) spent: model calls, tokens, cost, tool calls.

    The fold only adds up tokens, by the flow text in force, the provider that answered
    and the model (``priced``): ``cost`` prices them when asked, so that folding a run
    prices nothing. ``recorded_cost`` is what sub-flows' runs said they spent.
    """

    model_calls: int = 0
    tokens: int = 0
    tool_calls: int = 0
    recorded_cost: float = 0.0
    # (flow text, provider, model) -> [prompt, completion, cached] tokens
    priced: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    @property
    def cost(self) -> float:
        """US dollars, of the calls whose price is known (``unpriced`` counts the others)."""
        return self._priced()[0]

    @property
    def unpriced(self) -> int:
        """Groups of calls whose price is unknown (none, under a cost limit)."""
        return self._priced()[1]

    def _priced(self) -> tuple[float, int]:
        from roost.pricing import cost_of
        from roost.pricing._costs import entries_of

        total, unknown = self.recorded_cost, 0
        for (text, provider, model), (prompt, completion, cached) in self.priced.items():
            counts = _Counts(prompt, completion, cached)
            amount = cost_of(counts, entries_of(text).get(provider), model=model).amount
            if amount is None:
                unknown += 1
            else:
                total += amount
        return total, unknown

    def record(self) -> dict[str, float]:
        """What a ``tool_result`` of a sub-flow records of it (the amounts spent only)."""
        found = {
            "model_calls": self.model_calls,
            "tokens": self.tokens,
            "cost": round(self.cost, 9),
            "tool_calls": self.tool_calls,
        }
        return {key: value for key, value in found.items() if value}

    def add(self, other: Spent) -> None:
        self.model_calls += other.model_calls
        self.tokens += other.tokens
        self.tool_calls += other.tool_calls
        self.recorded_cost += other.recorded_cost
        for key, counts in other.priced.items():
            mine = self.priced.setdefault(key, [0, 0, 0])
            for index, value in enumerate(counts):
                mine[index] += value


@dataclass(frozen=True, slots=True)
class _Counts:
    """Token counts as pricing reads a call's usage."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int


def spent_from(record: dict[str, float]) -> Spent:
    """A ``tool_result``'s ``spent`` as a Spent (keys it does not know are ignored)."""
    return Spent(
        model_calls=int(record.get("model_calls", 0)),
        tokens=int(record.get("tokens", 0)),
        recorded_cost=float(record.get("cost", 0.0)),
        tool_calls=int(record.get("tool_calls", 0)),
    )


@dataclass(repr=False)
class RunState:
    """Everything the engine needs to know about a run, derived from its events."""

    run_id: str = ""
    status: Status = "new"
    history: list[HistoryEntry] = field(default_factory=list)
    pending: InterruptEvent | ErrorEvent | None = None
    provider_attempts: dict[str, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=lambda: Usage(calls=0))
    next_seq: int = 0
    # The flow in force: run_start's, or the latest ``flow`` event's.
    flow_path: str = ""
    flow_hash: str = ""
    flow_text: str = ""  # that flow's text as recorded (how its nodes' markers are read)
    terminated_by: str | None = None
    # (from, to) of the chat step in progress: what a retry after a dead process redoes.
    step: tuple[str, str] | None = None
    sent: dict[tuple[str, str], int] = field(default_factory=dict)
    last_into: dict[str, str] = field(default_factory=dict)
    inbox: dict[str, Thread] = field(default_factory=dict)
    pairs: dict[tuple[str, str], Thread] = field(default_factory=dict)
    selects: dict[str, int] = field(default_factory=dict)
    turn: Turn = field(default_factory=Turn)
    # (node, whom it answers) -> what compaction made of that view, and its latest size.
    views: dict[tuple[str, str], ViewBase] = field(default_factory=dict)
    # provider entry -> its characters per token, learnt from the usage it reported.
    calibration: dict[str, Calibration] = field(default_factory=dict)
    # provider entry -> the context window its server named when it refused a request as
    # too long: the model's real limit, used instead of the configured or known one.
    windows: dict[str, int] = field(default_factory=dict)
    # A fork's: the time whose shared memory it sees (run_start's memory_at).
    memory_at: str | None = None
    # The memory the run wrote (its store, forget and timeline events, inherited ones
    # too), in order: what a fork sees over the shared memory of memory_at.
    memory_writes: list[MemoryEvent] = field(default_factory=list)
    # The skills the latest ``skills`` event recorded (None: none yet), which the agents'
    # system prompts list: read from the log, so a replay lists what the run listed.
    skills: tuple[SkillInfo, ...] | None = None
    # The memory recalled for the reply in progress (since the latest message): what its
    # requests show again after a pause for approval or a retry, without recalling anew.
    recall: MemoryEvent | None = None
    # before_reply hooks, by (node, seq of the message it answers), as for tools: how
    # many have decided, the message as rewritten for the node, the reason one refused.
    reply_hooks: dict[tuple[str, int], int] = field(default_factory=dict)
    rewrites: dict[tuple[str, int], str] = field(default_factory=dict)
    refusals: dict[tuple[str, int], str] = field(default_factory=dict)
    # node -> a digest chained over its rewrites, so that a view shown rewritten digests apart.
    rewrite_digests: dict[str, bytes] = field(default_factory=dict)
    # background delegation: the tasks started and not yet delivered, by task id, and
    # how many were ever started (the next task is numbered after them).
    background: dict[str, BackgroundEvent] = field(default_factory=dict)
    background_started: int = 0
    # budgets: what each node spent, what the sub-flows it called spent, the
    # run's own time (seconds in steps, and when the step under way began), the budgets'
    # decisions, the limits raised (by scope: None for the run, else an agent) and the
    # provider a switch_to put in place of the scope's own.
    spent: dict[str, Spent] = field(default_factory=dict)
    subflows: Spent = field(default_factory=Spent)
    seconds: float = 0.0
    running_since: str | None = None
    budget_events: list[BudgetEvent] = field(default_factory=list)
    raised: dict[tuple[str | None, str], float] = field(default_factory=dict)
    switched: dict[str | None, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        # Short on purpose: asyncio writes the repr of a task's result when a run ends.
        return (
            f"RunState(run_id={self.run_id!r}, status={self.status!r}, "
            f"history=<{len(self.history)} entries>, next_seq={self.next_seq})"
        )

    def spent_by(self, agent: str | None = None) -> Spent:
        """What ``agent`` spent by its own calls; None: the whole run, sub-flows included."""
        if agent is not None:
            return self.spent.get(agent) or Spent()
        total = Spent()
        for spent in self.spent.values():
            total.add(spent)
        total.add(self.subflows)
        return total

    def pair_count(self, a: str, b: str) -> int:
        """Success messages between ``a`` and ``b``, both directions."""
        sent = self.sent
        return sent.get((a, b), 0) + sent.get((b, a), 0)

    def pair_thread(self, a: str, b: str) -> Thread:
        """The success messages between ``a`` and ``b`` (read only)."""
        return self.pairs.get((a, b) if a <= b else (b, a)) or _NO_THREAD

    def inbox_of(self, node: str) -> Thread:
        """The success messages addressed to ``node`` (read only)."""
        return self.inbox.get(node) or _NO_THREAD

    def is_channel(self, node: str) -> bool:
        """Whether ``node`` is a channel, as the log shows it: a speaker was selected for it."""
        return node in self.selects

    def conversation(self, node: str, to: str) -> Thread:
        """The entries ``node`` is shown when it answers ``to``: the channel's, or the pair's.

        (A channel's view also shows what the channel said to ``node`` alone; those
        rare entries are not counted in its size.)
        """
        return self.inbox_of(to) if self.is_channel(to) else self.pair_thread(node, to)

    def view_chars(self, node: str, to: str, base: ViewBase | None = None) -> int:
        """The characters of ``node``'s view when it answers ``to``, compaction applied
        (that of ``base`` when given: what a compaction would leave)."""
        if base is None:
            base = self.views.get((node, to))
        chars = thread_chars(self.conversation(node, to).sizes, base)
        turn = self.turn
        if turn.node == node and turn.messages:
            chars += tail_chars(turn.messages, turn.seqs, base.trimmed if base else -1)
        return chars

    def chars_per_token(self, provider: str) -> float:
        """``provider``'s characters per token, as calibrated so far."""
        calibration = self.calibration.get(provider)
        return calibration.ratio() if calibration is not None else Calibration().ratio()

    @property
    def last_message(self) -> HistoryEntry | None:
        """The latest success entry, if any."""
        return last_success(self.history)

    @property
    def answer(self) -> str | None:
        """What the run answered (``run_answer``), each node's markers read as the flow in
        force says; None when no message has text."""
        return run_answer(self.history, marker_rules(self.flow_text))

    @property
    def answer_data(self) -> Any:
        """The structured data of the message that holds the answer (its writer has a
        ``reply_format``); None when it has none."""
        found = answer_entry(self.history, marker_rules(self.flow_text))
        return getattr(found[0], "data", None) if found is not None else None


def last_success(history: Sequence[HistoryEntry]) -> HistoryEntry | None:
    """The latest success entry of ``history``, if any."""
    for entry in reversed(history):
        if entry.state == "success":
            return entry
    return None


def run_answer(
    history: Iterable[HistoryEntry], rule_of: Callable[[str], MarkerRule] | None = None
) -> str | None:
    """A run's answer: what batch results, flow tests, ``roost show``, the Python API and
    the server report as what the run said.

    It is the content of the latest success message that still has text once a
    ``TERMINATE`` or ``INTERRUPT`` at its end (as its writer's ``markers`` rule reads
    one: ``rule_of(node)``, ``end`` by default) is taken off, with that marker taken
    off. A last message that is only ``TERMINATE`` marks the run's end: the message
    before it is the answer. None when no success message has text.
    """
    found = answer_entry(history, rule_of)
    return found[1] if found is not None else None


def answer_entry(
    history: Iterable[HistoryEntry], rule_of: Callable[[str], MarkerRule] | None = None
) -> tuple[HistoryEntry, str] | None:
    """The message that holds the run's answer (``run_answer``) and the answer's text."""
    entries = history if isinstance(history, list) else list(history)
    for entry in reversed(entries):
        if entry.state != "success":
            continue
        text = without_marker(entry.content, rule_of(entry.from_) if rule_of else "end")
        if text.strip():
            return entry, text
    return None


def without_marker(content: str, rule: MarkerRule = "end") -> str:
    """``content`` without the marker at its end, when ``rule`` reads one there (the text
    before it, trailing space trimmed); else ``content`` as written."""
    word = marker_in(content, rule)
    if word is None:
        return content
    stripped = content.rstrip()
    if not stripped.endswith(word):
        return content  # ``anywhere`` found it inside the text: nothing ends it
    return stripped[: -len(word)].rstrip()


def marker_rules(flow_text: str) -> Callable[[str], MarkerRule]:
    """How each node of the flow written in ``flow_text`` marks its replies: its own
    ``markers``, else ``defaults.markers``, else ``end`` (for a text that does not read)."""
    default, own = _marker_settings(flow_text)
    return lambda node: own.get(node, default)


_RULES = ("end", "whole", "anywhere")


@lru_cache(maxsize=64)
def _marker_settings(flow_text: str) -> tuple[MarkerRule, dict[str, MarkerRule]]:
    from roost.errors import FlowError
    from roost.flow.yamlread import build, compose  # bounded: a recorded text may be hostile

    try:
        data = build(compose(flow_text, "flow"), "flow").data if flow_text else {}
    except FlowError:
        data = {}
    defaults, agents = data.get("defaults"), data.get("agents")
    default = defaults.get("markers") if isinstance(defaults, dict) else None
    own: dict[str, MarkerRule] = {}
    for name, agent in agents.items() if isinstance(agents, dict) else ():
        rule = agent.get("markers") if isinstance(agent, dict) else None
        if rule in _RULES:
            own[str(name)] = rule
    return (default if default in _RULES else "end"), own


def fold(events: Iterable[Event]) -> RunState:
    """The state of a run whose log holds ``events`` (pure: the same events, the same state)."""
    state = RunState()
    for event in events:
        apply(state, event)
    return state


def statuses(events: Iterable[Event]) -> list[Status]:
    """The status after each prefix: ``[fold(events[:n]).status for n in 0..len]``, in one pass."""
    state = RunState()
    found: list[Status] = [state.status]
    for event in events:
        found.append(apply(state, event).status)
    return found


def apply(state: RunState, event: Event) -> RunState:
    """Advances ``state`` by one event, in place, and returns it."""
    kind = event.type
    handler = HANDLERS.get(kind)
    if handler is not None:
        handler(state, event)
    state.status = STATUS_AFTER.get(kind, state.status)
    state.next_seq = event.seq + 1
    if not state.run_id:
        state.run_id = event.run
    return state


def _on_run_start(state: RunState, event: Any) -> None:
    start: RunStartEvent = event
    state.flow_path = start.flow.path
    state.flow_hash = start.flow.hash
    state.flow_text = start.flow.text
    state.memory_at = start.memory_at
    state.running_since = start.ts


def _on_flow(state: RunState, event: Any) -> None:
    # Only the flow in force changes: the history, the status and the turn stay as they are.
    change: FlowEvent = event
    state.flow_path = change.flow.path
    state.flow_hash = change.flow.hash
    state.flow_text = change.flow.text


def _on_message(state: RunState, event: Any) -> None:
    # The busiest handler (once per message), so written for speed: attribute
    # lookups hoisted, the digest chained inline.
    data = event.__dict__
    frm, to, content = data["from_"], data["to"], data["content"]
    history = state.history
    index = len(history)
    history.append(event)
    key = (frm, to)
    sent = state.sent
    sent[key] = sent.get(key, 0) + 1
    state.last_into[to] = frm
    payload = f"{frm}\x1f{to}\x1f{content}".encode()
    size = len(content) + len(frm) + ENTRY_OVERHEAD  # roost.context_window.entry_size, inlined
    images = data.get("images")
    if images:  # a message's images are part of it: the digests cover them by hash
        payload += "".join(f"\x1fimage\x1f{image.hash}" for image in images).encode()
        size += IMAGE_CHARS * len(images)
    inbox = state.inbox.get(to)
    if inbox is None:
        inbox = state.inbox[to] = Thread()
    inbox.indices.append(index)
    inbox.digest = sha256(inbox.digest + payload).digest()
    sizes = inbox.sizes
    sizes.append(sizes[-1] + size if sizes else size)
    pair_key = key if frm <= to else (to, frm)
    pair = state.pairs.get(pair_key)
    if pair is None:
        pair = state.pairs[pair_key] = Thread()
    pair.indices.append(index)
    pair.digest = sha256(pair.digest + payload).digest()
    sizes = pair.sizes
    sizes.append(sizes[-1] + size if sizes else size)
    state.pending = None
    state.step = (to, frm)
    state.recall = None
    turn = state.turn
    if turn.node or turn.messages:
        state.turn = Turn()
    delivered = data.get("background")
    if delivered is not None:
        state.background.pop(delivered.task, None)


def _on_interrupt(state: RunState, event: Any) -> None:
    interrupt: InterruptEvent = event
    state.history.append(interrupt)
    state.pending = interrupt
    _stop_clock(state, interrupt.ts)


def _on_error(state: RunState, event: Any) -> None:
    error: ErrorEvent = event
    state.history.append(error)
    state.pending = error
    state.step = (error.from_, error.to)
    _stop_clock(state, error.ts)
    # The turn is kept: a retry goes on with the tool results it already has,
    # rather than running those tools a second time.


def _on_terminate(state: RunState, event: Any) -> None:
    terminate: TerminateEvent = event
    state.pending = None
    state.terminated_by = terminate.node
    state.step = None
    _stop_clock(state, terminate.ts)


def _stop_clock(state: RunState, ts: str) -> None:
    """The step under way ended at ``ts``: its time is the run's own (budgets' seconds)."""
    since = state.running_since
    if since is not None:
        state.running_since = None
        state.seconds += max(elapsed(since, ts), 0.0)


def elapsed(since: str, until: str) -> float:
    """Seconds from one recorded time to another (both as the log writes them)."""
    from datetime import datetime

    try:
        return (datetime.fromisoformat(until) - datetime.fromisoformat(since)).total_seconds()
    except ValueError:  # a log written elsewhere with a time that does not read
        return 0.0


def _on_resume(state: RunState, event: Any) -> None:
    resume: ResumeEvent = event
    pending = state.pending
    if isinstance(pending, InterruptEvent) and pending.reason == "tool_approval":
        call_id = str((pending.tool_call or {}).get("id", ""))
        state.turn.decisions[call_id] = resume.feedback
    elif isinstance(pending, InterruptEvent) and pending.reason == "tool_plan":
        for call in pending.tool_calls or ():  # one answer for the whole plan
            state.turn.decisions[str(call.get("id", ""))] = resume.feedback
    state.pending = None
    state.step = (resume.from_, resume.to)
    state.running_since = resume.ts


def _on_retry(state: RunState, event: Any) -> None:
    retry: RetryEvent = event
    state.pending = None
    state.step = (retry.from_, retry.to)
    state.running_since = retry.ts


def _on_select(state: RunState, event: Any) -> None:
    # Once per message in a channel: read straight from the event's fields.
    data = event.__dict__
    channel = data["channel"]
    selects = state.selects
    selects[channel] = selects.get(channel, 0) + 1
    state.step = (data["chosen"], channel)


def _on_llm_call(state: RunState, event: Any) -> None:
    # Once per model call: the fields are read straight from the event's dictionary.
    data = event.__dict__
    provider = data["provider"]
    attempts = state.provider_attempts
    if data["attempts"]:
        for attempt in data["attempts"]:
            attempts[attempt.provider] = attempts.get(attempt.provider, 0) + 1
    else:
        attempts[provider] = attempts.get(provider, 0) + 1
    if data["error"] is not None:
        _learn_window(state, provider, data["error"], data["attempts"])
    usage = data["usage"]
    spent = state.spent.get(data["node"])
    if spent is None:
        spent = state.spent[data["node"]] = Spent()
    spent.model_calls += len(data["attempts"]) or 1  # a fallback's calls count too
    if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
        state.usage = state.usage + usage_of(usage)
        _spend(state, spent, event, usage)
        if usage.prompt_tokens and data.get("purpose") is None:
            _measured(state, data["node"], provider, usage.prompt_tokens)
    response = data["response"]
    if response is not None and response.tool_calls:
        message = assistant_message(response, provider)
        turn = _turn_for(state, data["node"])
        turn.messages.append(message)
        turn.seqs.append(data["seq"])
        turn.awaiting = {tool_call.id for tool_call in message.tool_calls}


def _spend(state: RunState, spent: Spent, call: Any, usage: LlmUsage) -> None:
    """A call's tokens, kept by what prices them (as ``run_cost`` prices it): the flow in
    force, the provider entry that answered, the model."""
    prompt = usage.prompt_tokens
    spent.tokens += prompt + usage.completion_tokens
    attempts = call.attempts
    answered = attempts[-1].provider if attempts and attempts[-1].outcome == "ok" else None
    key = (state.flow_text, answered or call.provider, call.model)
    counts = spent.priced.get(key)
    if counts is None:
        counts = spent.priced[key] = [0, 0, 0]
    counts[0] += prompt
    counts[1] += usage.completion_tokens
    counts[2] += min(usage.cached_tokens, prompt)  # as cost_of takes a call's


def _learn_window(state: RunState, provider: str, error: str, attempts: Sequence[Any]) -> None:
    """A refusal as too long that names the server's limit: the provider's window from now."""
    if not any(attempt.outcome == CONTEXT_TOO_LONG for attempt in attempts):
        return
    limit = limit_in(error)
    if limit is not None:
        state.windows[provider] = min(limit, state.windows.get(provider, limit))


def _measured(state: RunState, node: str, provider: str, prompt_tokens: int) -> None:
    """A call of ``node`` reported its prompt's size: the anchor of the view's next estimate.

    The view is the one the step in progress shows (the request was built from the
    state as it is now). Its growth since the previous reported call, in characters
    and in tokens, calibrates the provider's characters per token.
    """
    step = state.step
    if step is None or step[0] != node or state.is_channel(node):
        return  # a director's call, or a call outside a step: no view of an agent's
    key = (node, step[1])
    chars = state.view_chars(node, step[1])
    plain = state.turn.node != node or not state.turn.messages
    base = state.views.get(key)
    if base is None:
        base = state.views[key] = ViewBase()
    elif (
        base.reported
        and base.plain
        and plain
        and chars > base.anchor_chars
        and prompt_tokens > base.anchor_tokens
    ):
        calibration = state.calibration.get(provider)
        if calibration is None:
            calibration = state.calibration[provider] = Calibration()
        calibration.add(chars - base.anchor_chars, prompt_tokens - base.anchor_tokens)
    base.anchor_tokens, base.anchor_chars = prompt_tokens, chars
    base.reported, base.plain = True, plain


def _on_tool_call(state: RunState, event: Any) -> None:
    call: ToolCallEvent = event
    _turn_for(state, call.agent).open_calls[call.id] = call
    spent = state.spent.get(call.agent)
    if spent is None:
        spent = state.spent[call.agent] = Spent()
    spent.tool_calls += 1


def _on_tool_result(state: RunState, event: Any) -> None:
    result: ToolResultEvent = event
    if result.spent:  # a sub-flow's spending counts toward the run's
        state.subflows.add(spent_from(result.spent))
    turn = _turn_for(state, result.agent)
    turn.open_calls.pop(result.id, None)
    # A person's approval answers this call only: an id reused in a later round asks again.
    turn.decisions.pop(result.id, None)
    if turn.hooked:  # and so do the hooks' decisions
        turn.hooked.pop(result.id, None)
        turn.changed.pop(result.id, None)
        turn.refused.pop(result.id, None)
    turn.messages.append(
        ToolResultMessage(
            tool_call_id=result.id,
            name=result.name,
            content=result.content,
            is_error=result.is_error,
        )
    )
    turn.seqs.append(result.seq)
    if result.id in turn.awaiting:
        turn.awaiting.discard(result.id)
        if not turn.awaiting:
            turn.rounds += 1


def _on_compact(state: RunState, event: Any) -> None:
    # The view changes, the history does not: the next request shows what the stage left.
    compact: CompactEvent = event
    key = (compact.node, compact.to)
    base = state.views.get(key)
    if base is None:
        base = state.views[key] = ViewBase()
    if compact.stage == "trim":
        base.trimmed = max(base.trimmed, compact.through)
    else:
        history = state.history
        indices = state.conversation(compact.node, compact.to).indices
        base.covered = bisect_right(indices, compact.through, key=lambda i: history[i].seq)
        base.through = compact.through
        base.summary = compact.summary if compact.stage == "summary" else None
    base.stage = compact.stage
    base.anchor_tokens = compact.tokens_after
    base.anchor_chars = state.view_chars(compact.node, compact.to)
    base.reported = False


def _on_memory(state: RunState, event: Any) -> None:
    memory: MemoryEvent = event
    if memory.operation == "recall":  # a recall reads: it changes no memory
        state.recall = memory
    else:
        state.memory_writes.append(memory)


def _on_hook(state: RunState, event: Any) -> None:
    hook: HookEvent = event
    if hook.stage == "before_tool" and hook.tool_call is not None:
        turn = _turn_for(state, hook.node)
        call_id = hook.tool_call
        turn.hooked[call_id] = turn.hooked.get(call_id, 0) + 1
        if hook.decision == "refuse":
            turn.refused[call_id] = hook.reason or ""
        elif hook.decision == "change" and hook.arguments is not None:
            turn.changed[call_id] = hook.arguments
    elif hook.stage == "before_reply" and hook.message is not None:
        key = (hook.node, hook.message)
        state.reply_hooks[key] = state.reply_hooks.get(key, 0) + 1
        if hook.decision == "refuse":
            state.refusals[key] = hook.reason or ""
        elif hook.decision == "change" and hook.content is not None:
            state.rewrites[key] = hook.content
            payload = f"{hook.message}\x1f{hook.content}".encode()
            before = state.rewrite_digests.get(hook.node, _EMPTY_DIGEST)
            state.rewrite_digests[hook.node] = sha256(before + payload).digest()
    # after_tool decisions change the result that the tool_result event records.


def _on_background(state: RunState, event: Any) -> None:
    task: BackgroundEvent = event
    state.background[task.task] = task
    state.background_started += 1


def _turn_for(state: RunState, node: str) -> Turn:
    if state.turn.node != node:
        state.turn = Turn(node=node)
    return state.turn


def assistant_message(
    response: LlmResponse, provider: str, *, with_calls: bool = True
) -> AssistantMessage:
    """The answer an ``llm_call`` records, as the message model holds it (validated)."""
    # Ids made distinct here too: a log written elsewhere may repeat one within an answer.
    calls = distinct_ids(
        tuple(
            ToolCall(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                raw_arguments=call.raw_arguments,
                provider_details=call.provider_details,
            )
            for call in (response.tool_calls if with_calls else ())
        )
    )
    reasoning = tuple(
        ReasoningPart.model_validate(part.model_dump(exclude=set(part.model_extra or ())))
        for part in response.reasoning
    )
    return AssistantMessage(
        content=response.text, tool_calls=calls, reasoning=reasoning, provider=provider
    )


def usage_of(record: LlmUsage) -> Usage:
    """The tokens an ``llm_call`` records, as the message model counts them."""
    return Usage(
        prompt_tokens=record.prompt_tokens,
        completion_tokens=record.completion_tokens,
        cached_tokens=record.cached_tokens,
        reasoning_tokens=record.reasoning_tokens,
        calls=record.calls,
    )


def _on_skills(state: RunState, event: Any) -> None:
    found: SkillsEvent = event
    state.skills = found.skills


def _on_budget(state: RunState, event: Any) -> None:
    budget: BudgetEvent = event
    state.budget_events.append(budget)
    if budget.action == "raised":
        state.raised[(budget.agent, budget.limit)] = budget.allowed
    elif budget.action == "switch_to" and budget.provider is not None:
        state.switched[budget.agent] = budget.provider


HANDLERS: dict[str, Any] = {
    "run_start": _on_run_start,
    "flow": _on_flow,
    "message": _on_message,
    "interrupt": _on_interrupt,
    "error": _on_error,
    "terminate": _on_terminate,
    "resume": _on_resume,
    "retry": _on_retry,
    "select": _on_select,
    "llm_call": _on_llm_call,
    "tool_call": _on_tool_call,
    "tool_result": _on_tool_result,
    "compact": _on_compact,
    "memory": _on_memory,
    "skills": _on_skills,
    "hook": _on_hook,
    "background": _on_background,
    "budget": _on_budget,
}
