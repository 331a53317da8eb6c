"""The neutral shape every importer reads a foreign file into: who said what, in order.

An importer turns its engine's file into a ``Conversation``; ``derive`` turns
that into a roost flow and its run. Nothing here knows any engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from roost.errors import RoostError


class ImportFormatError(RoostError):
    """A file that is not what its ``--from`` format writes (exit 2, nothing stored)."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call a model asked for, and the result its tool gave (None: none recorded)."""

    id: str
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ImportedStep:
    """One model call of a reply: its tool calls (none for the final text)."""

    tool_calls: tuple[ToolCall, ...] = ()
    model: str | None = None
    usage: dict[str, int] | None = None


@dataclass(slots=True)
class ImportedTurn:
    """One speaker's reply: the tool rounds it made, then its text."""

    speaker: str
    content: str
    steps: list[ImportedStep] = field(default_factory=list)  # tool rounds before the text
    model: str | None = None
    usage: dict[str, int] | None = None
    ts: str | None = None
    human: bool = False  # a person's answer, not a model's


@dataclass(slots=True)
class Conversation:
    """A foreign run: its turns in order, the speakers' system messages, where it came from."""

    turns: list[ImportedTurn]
    roles: dict[str, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)  # format, file, thread, engine version
    notes: list[str] = field(default_factory=list)  # what the file does not say, one line each
    chosen_by: str = "order"  # "recorded" when the engine recorded its speaker choices

    @property
    def speakers(self) -> list[str]:
        return list(dict.fromkeys(turn.speaker for turn in self.turns))
