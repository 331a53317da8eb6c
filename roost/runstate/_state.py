"""A run's state: what the engine needs to know about a run, as the fold leaves it.

``RunState`` is changed only by the fold (``roost.runstate._fold``); its methods read
it. A run's status depends on its previous status and the type of each event alone
(``STATUS_AFTER``), so a reader that keeps only the status (the store's run list)
advances it with ``status_after`` and agrees with the fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from roost.context_window import Calibration, ViewBase, tail_chars, thread_chars
from roost.messages import AssistantMessage, ToolCall, ToolResultMessage, Usage
from roost.runstate._history import (
    EMPTY_THREAD,
    HistoryEntry,
    Thread,
    answer_entry,
    last_success,
    marker_rules,
    run_answer,
)

if TYPE_CHECKING:
    from roost.events import (
        BackgroundEvent,
        BudgetEvent,
        ErrorEvent,
        InterruptEvent,
        MemoryEvent,
        SkillInfo,
        ToolCallEvent,
    )

Status = Literal["new", "running", "paused", "error", "terminated"]


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
        return self.pairs.get((a, b) if a <= b else (b, a)) or EMPTY_THREAD

    def inbox_of(self, node: str) -> Thread:
        """The success messages addressed to ``node`` (read only)."""
        return self.inbox.get(node) or EMPTY_THREAD

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
