"""The interface the engine's tool loop sees for every kind of tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from roost.messages import ToolSpec


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call gave: text for the model, whether it failed, a child run if any.

    ``task`` names the background task a ``background: true`` sub-flow tool started.
    """

    content: str
    is_error: bool = False
    child_run: str | None = None
    task: str | None = None
    # budgets: what a sub-flow's child run spent, counted toward the parent's.
    spent: dict[str, float] | None = None


@dataclass(frozen=True, slots=True)
class Declared:
    """One tool as its declaration describes it, with nothing run: what a model is offered
    (``spec``) and the settings the tool loop reads; each kind of tool makes its own."""

    spec: ToolSpec
    direct_output: bool = False
    approval: bool = False
    timeout: float = 10.0
    background: bool = False


@runtime_checkable
class Tool(Protocol):
    """One callable tool as an agent is offered it.

    ``spec.name`` is the name the model calls (``add``, ``math#add`` becomes
    the wire-safe name the toolbox chose); ``call`` validates ``arguments``
    against ``spec.parameters`` and never raises for the tool's own failures:
    those come back as ``ToolOutcome(is_error=True)``. The tool loop applies
    ``timeout`` around ``call``.
    """

    spec: ToolSpec
    direct_output: bool
    approval: bool
    timeout: float

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome: ...


def raised_text(exc: BaseException) -> str:
    """What a tool raised, for a person: ``Type: message``, or ``sys.exit(CODE)``."""
    if isinstance(exc, SystemExit):
        return f"sys.exit({'' if exc.code is None else repr(exc.code)})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
