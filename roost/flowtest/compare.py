"""``roost compare FLOW_A FLOW_B INPUTS``: every row under both flows, and where they differ.

Each side is an ordinary ``roost batch`` of its flow over the inputs (its
rows ordinary stored runs, a batch of its own per flow), so running the
comparison again reuses the finished runs. Rows are paired by their place in
the inputs; a pair differs when the two answers do. A judge, when asked, is
shown both answers in a random order that is recorded (``shown``), so that a
judge's bias for the first shows as noise rather than as a verdict, and
answers ``{"prefer": "1"|"2"|"tie", "reason"}`` as strict JSON, checked with
a JSON Schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonschema

from roost.events import LlmCallEvent
from roost.messages import ModelRequest, UserMessage

if TYPE_CHECKING:
    import random

    from roost.batch.rows import RowResult
    from roost.providers.base import Provider
    from roost.store.sql import SqlStore

PREFERENCE: dict[str, Any] = {
    "type": "object",
    "properties": {"prefer": {"enum": ["1", "2", "tie"]}, "reason": {"type": "string"}},
    "required": ["prefer", "reason"],
    "additionalProperties": False,
}
INSTRUCTION = (
    "You compare two answers to the same message against a rubric. Answer with one JSON "
    'object and nothing else: {"prefer": "1", "2" or "tie", "reason": "one sentence"}.'
    "\n\nRubric: "
)


@dataclass(frozen=True, slots=True)
class Side:
    """One row under one flow: its run and what it answered and spent."""

    run: str | None
    status: str
    final: str | None
    tokens: int
    cost: float | None
    model_calls: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run, "status": self.status, "final": self.final,
            "tokens": self.tokens, "cost": self.cost, "model_calls": self.model_calls,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Preference:
    """The judge's choice (``a``, ``b`` or ``tie``), why, and the order it saw (``shown``)."""

    prefer: str
    reason: str
    shown: tuple[str, str]


@dataclass(frozen=True, slots=True)
class Pair:
    row: int
    message: str | None
    a: Side
    b: Side
    preference: Preference | None = None

    @property
    def differs(self) -> bool:
        return self.a.final != self.b.final

    def as_dict(self) -> dict[str, Any]:
        judged = self.preference
        return {
            "row": self.row,
            "differs": self.differs,
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "judge": None
            if judged is None
            else {"prefer": judged.prefer, "reason": judged.reason, "shown": list(judged.shown)},
        }


@dataclass
class Totals:
    rows: int = 0
    changed: int = 0
    preferred: dict[str, int] = field(default_factory=lambda: {"a": 0, "b": 0, "tie": 0})
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    cost: list[float] = field(default_factory=lambda: [0.0, 0.0])
    model_calls: list[int] = field(default_factory=lambda: [0, 0])

    @classmethod
    def of(cls, pairs: list[Pair]) -> Totals:
        totals = cls(rows=len(pairs))
        for pair in pairs:
            totals.changed += pair.differs
            if pair.preference is not None:
                totals.preferred[pair.preference.prefer] += 1
            for index, side in enumerate((pair.a, pair.b)):
                totals.tokens[index] += side.tokens
                totals.cost[index] += side.cost or 0.0
                totals.model_calls[index] += side.model_calls
        return totals


def side_of(result: RowResult, store: SqlStore) -> Side:
    """A row's result with the model calls its run made."""
    calls = 0
    if result.run is not None:
        events = store.log(result.run).load()
        calls = sum(1 for event in events if isinstance(event, LlmCallEvent))
    return Side(result.run, result.status, result.final, result.tokens, result.cost, calls)


async def preference(
    provider: Provider, rubric: str, message: str | None, a: str, b: str, chooser: random.Random
) -> Preference:
    """Which answer the judge prefers, the two shown in an order ``chooser`` picks."""
    shown = ("a", "b") if chooser.random() < 0.5 else ("b", "a")
    answers = {"a": a, "b": b}
    text = (
        f"The message:\n{message or '(the flow start message)'}\n\n"
        f"Answer 1:\n{answers[shown[0]]}\n\nAnswer 2:\n{answers[shown[1]]}"
    )
    request = ModelRequest(
        system=INSTRUCTION + rubric, messages=(UserMessage(content=text),), node="judge"
    )
    response = await provider.complete(request)
    said = response.message.content or ""
    try:
        data = json.loads(said)
        jsonschema.validate(data, PREFERENCE)
    except (json.JSONDecodeError, jsonschema.ValidationError):
        return Preference("tie", f"the judge's reply is not a preference: {said[:200]!r}", shown)
    prefer = data["prefer"]
    chosen = "tie" if prefer == "tie" else shown[int(prefer) - 1]
    return Preference(chosen, str(data["reason"]), shown)
