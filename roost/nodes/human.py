"""Human nodes: agents with ``interrupt: ALWAYS``, and the answers a person gives.

The engine never prompts anyone. When a human node is to speak, the run
pauses at an interrupt; the person's answer comes back through
``Runner.continue_``, and the checks here decide whether it can be used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import RunStateError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.flow.models import Flow


def is_human(flow: Flow, node: str) -> bool:
    """Whether ``node`` is an agent that always waits for a person."""
    return node in flow.agents and flow.interrupt_of(node) == "ALWAYS"


def manual_choice(answer: str, channel: str, members: list[str], found: Sequence[str]) -> str:
    """The member a person named to speak next; a clear error for any other answer."""
    name = answer.strip().lstrip("@").strip()
    choices = ", ".join(found)
    if not name:
        raise RunStateError(f"{channel} waits for the name of the next speaker (one of: {choices})")
    if name not in members:
        raise RunStateError(f"{name!r} is not a member of {channel}; answer with one of: {choices}")
    if name not in found:
        raise RunStateError(
            f"{name!r} may not speak next in {channel}; answer with one of: {choices}"
        )
    return name


def check_self_answer(flow: Flow, node: str) -> None:
    """Raises when ``node`` must answer by itself (no feedback) but has no provider."""
    if node in flow.agents and flow.provider_of(node) is None:
        raise RunStateError(
            f"{node} has no provider to answer by itself; give an answer (feedback) instead"
        )
