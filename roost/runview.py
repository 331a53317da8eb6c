"""A run's state as a value, for code outside the engine: ``RunView`` and ``Pause``.

The engine keeps its own ``RunState`` (``roost.runstate``), changed in place by
each event it records. ``roost.run`` hands its callers copies instead: a
``RunView`` of where the run came to rest, and at each pause a ``Pause``
saying who waits, for whom and why. Both are frozen, and what they hold that
could be changed (an interrupt's tool calls) is copied, so nothing a caller
does to them reaches the run.

A ``Pause`` is answered by what ``answer`` returns: the text to say, or one of
``approve()``, ``refuse(reason)`` and ``let_answer()``, or None to leave the
run paused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from roost.approval import APPROVE
from roost.errors import UsageError
from roost.events import ErrorEvent, InterruptEvent
from roost.pricing import RunCost
from roost.runstate import last_success

if TYPE_CHECKING:
    from roost.messages import Usage
    from roost.runstate import HistoryEntry, RunState, Status

# Why a run waits: a person's turn, tool calls waiting for approval, or a person
# choosing who speaks next in a channel (``selector: manual``).
PauseKind = Literal["person", "tool_approval", "manual_choice", "budget"]

_KINDS: dict[str | None, PauseKind] = {
    None: "person",
    "human": "person",
    "tool_approval": "tool_approval",
    "tool_plan": "tool_approval",
    "manual_select": "manual_choice",
    "budget": "budget",
}


@dataclass(frozen=True, slots=True, repr=False)
class RunView:
    """Where a run came to rest, as a value: what ``roost.run`` returns.

    ``answer`` is what the run answered (``roost.runstate.run_answer``); ``cost``
    what its model calls cost (``roost.pricing.run_cost``).
    """

    run_id: str
    status: Status
    history: tuple[HistoryEntry, ...]
    pending: InterruptEvent | ErrorEvent | None
    usage: Usage
    cost: RunCost
    answer: str | None
    terminated_by: str | None
    next_seq: int
    flow_path: str

    def __repr__(self) -> str:
        return (
            f"RunView(run_id={self.run_id!r}, status={self.status!r}, "
            f"history=<{len(self.history)} entries>, answer={self.answer!r})"
        )

    @property
    def last_message(self) -> HistoryEntry | None:
        """The latest success entry, if any."""
        return last_success(self.history)


def view_of(state: RunState, cost: RunCost | None = None) -> RunView:
    """A frozen copy of what ``state`` says of the run, for callers outside the engine."""
    return RunView(
        run_id=state.run_id,
        status=state.status,
        # Interrupts carry dictionaries (the tool calls): copied, so that changing
        # them changes nothing the engine reads. Other entries are frozen already.
        history=tuple(_copied(entry) for entry in state.history),
        pending=_copied(state.pending) if state.pending is not None else None,
        usage=state.usage,
        cost=cost if cost is not None else RunCost(),
        answer=state.answer,
        terminated_by=state.terminated_by,
        next_seq=state.next_seq,
        flow_path=state.flow_path,
    )


def _copied(entry: Any) -> Any:
    if isinstance(entry, InterruptEvent) and (entry.tool_call or entry.tool_calls):
        return entry.model_copy(deep=True)
    return entry


@dataclass(frozen=True, slots=True)
class PauseAnswer:
    """What a ``Pause``'s method answers it with: the text the run is continued with."""

    text: str
    seq: int  # the seq of the interrupt it answers: an answer is for that pause only


@dataclass(frozen=True, slots=True, repr=False)
class Pause:
    """A paused run, as ``roost.run`` hands it to ``answer``.

    ``node`` waits and ``to`` is whom it answers; ``kind`` says why (a person's
    turn, a tool approval, a manual choice); ``tool_calls`` are the calls
    awaiting approval (copies: each with ``id``, ``name``, ``arguments``);
    ``choices`` the members a manual choice may name; ``run`` the run's view.
    """

    kind: PauseKind
    node: str
    to: str
    tool_calls: tuple[dict[str, Any], ...]
    choices: tuple[str, ...]
    run: RunView
    interrupt: InterruptEvent

    def __repr__(self) -> str:
        return f"Pause(kind={self.kind!r}, node={self.node!r}, to={self.to!r})"

    # What a callback written for the state it was once given reads: the run's view.
    @property
    def pending(self) -> InterruptEvent:
        """The interrupt the run waits at."""
        return self.interrupt

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def status(self) -> Status:
        return self.run.status

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        return self.run.history

    @property
    def last_message(self) -> HistoryEntry | None:
        return self.run.last_message

    @property
    def answer(self) -> str | None:
        return self.run.answer

    @property
    def usage(self) -> Usage:
        return self.run.usage

    def approve(self) -> PauseAnswer:
        """Runs the tool calls awaiting approval."""
        self._only("tool_approval", "approve()")
        return PauseAnswer("yes", self.interrupt.seq)

    def refuse(self, reason: str = "") -> PauseAnswer:
        """Refuses the tool calls awaiting approval; the model is told ``reason``, if given."""
        self._only("tool_approval", "refuse()")
        said = reason.strip()
        if said.lower() in APPROVE:
            raise UsageError(f"refuse({reason!r}): that reason reads as approving; say why not")
        return PauseAnswer(said or "no", self.interrupt.seq)

    def raise_budget(self, limit: float) -> PauseAnswer:
        """Gives the budget that stopped the run a new ``limit`` (above what was spent)."""
        self._only("budget", "raise_budget()")
        if isinstance(limit, bool) or not isinstance(limit, int | float) or not limit > 0:
            raise UsageError(f"raise_budget({limit!r}): give a positive number")
        return PauseAnswer(repr(float(limit)), self.interrupt.seq)

    def stop(self) -> PauseAnswer:
        """Answers the budget that stopped the run with no: the run ends."""
        self._only("budget", "stop()")
        return PauseAnswer("no", self.interrupt.seq)

    def let_answer(self) -> PauseAnswer:
        """Lets the waiting node answer by itself, through its own provider."""
        self._only("person", "let_answer()")
        return PauseAnswer("", self.interrupt.seq)

    def _only(self, kind: PauseKind, method: str) -> None:
        if self.kind != kind:
            raise UsageError(
                f"{method} answers a {kind.replace('_', ' ')}, and {self.node} waits for a "
                f"{self.kind.replace('_', ' ')}: return the text to say instead"
            )


def pause_of(view: RunView, choices: tuple[str, ...] = ()) -> Pause | None:
    """The pause ``view`` is at (None when the run is not paused at an interrupt)."""
    interrupt = view.pending
    if view.status != "paused" or not isinstance(interrupt, InterruptEvent):
        return None
    calls = interrupt.tool_calls or ((interrupt.tool_call,) if interrupt.tool_call else ())
    kind = _KINDS.get(interrupt.reason, "person")
    return Pause(
        kind=kind,
        node=interrupt.from_,
        to=interrupt.to,
        tool_calls=tuple(calls),  # the view's pending is a copy already
        choices=choices if kind == "manual_choice" else (),
        run=view,
        interrupt=interrupt,
    )


def text_of(reply: object, pause: Pause) -> str:
    """The text ``reply`` (what ``answer`` returned for ``pause``) continues the run with."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, PauseAnswer):
        if reply.seq != pause.interrupt.seq:
            raise UsageError("answer returned the answer of an earlier pause")
        return reply.text
    raise UsageError(
        f"answer returned {type(reply).__name__}: give the answer as text, or the "
        "pause's approve(), refuse(reason) or let_answer(), or None to leave the run paused"
    )
