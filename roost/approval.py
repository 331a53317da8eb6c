"""What a person's answer to a tool approval means, in one place.

The terminal (``roost run``), ``roost chat``, the server and the engine's tool
loop all read an approval through ``approval``: ``yes`` or ``y`` (any case,
spaces around ignored) approves, ``no`` or ``n`` refuses, and any other text
refuses with that text as the reason the model is given.
"""

from __future__ import annotations

from typing import NamedTuple

APPROVE = ("yes", "y")
REFUSE = ("no", "n")


class Approval(NamedTuple):
    """A person's decision on a tool call: approved or not, and the reason they gave."""

    approved: bool
    reason: str  # a refusal's own words; "" for a plain yes, no or an empty answer


def approval(answer: str) -> Approval:
    """The decision ``answer`` makes at a tool approval (pure: no I/O, no state)."""
    said = answer.strip()
    word = said.lower()
    if word in APPROVE:
        return Approval(True, "")
    if word in REFUSE:
        return Approval(False, "")
    return Approval(False, said)


def refusal_text(answer: str, what: str = "call") -> str:
    """The result a refused call gives the model: the person's reason, when they gave one."""
    reason = approval(answer).reason
    said = f": {reason}" if reason else "."
    return f"The person did not approve this {what}{said}"
