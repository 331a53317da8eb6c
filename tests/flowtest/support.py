"""A support desk (an agent, a person, two tools) for the graded tests: repeats, limits,
judges, simulated people. Its ``flip`` tool answers yes and no in turn, across runs of
one process, so that a repeated case passes some of its runs and not others."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SUPPORT = """\
roost: 1
name: support
defaults: {provider: desk}
providers:
  desk: {kind: scripted, replies: ["Hello"], when_exhausted: repeat_last}
tools:
  lookup_order: {python: "shop:lookup_order", description: Find an order}
  refund: {python: "shop:refund", description: Refund an order}
  flip: {python: "shop:flip", description: "Yes, then no, in turn"}
agents:
  support:
    role: You help customers.
    functions: [lookup_order, refund, flip]
  customer: {interrupt: ALWAYS, role: The customer.}
start: {from: customer, to: support, content: "Where is my order 42?"}
"""

SHOP = """\
import itertools

_turns = itertools.cycle(["yes", "no"])


def lookup_order(number: int) -> str:
    return f"order {number}: shipped"


def refund(number: int) -> str:
    return f"order {number}: refunded"


def flip() -> str:
    return next(_turns)
"""


def support_folder(folder: Path) -> Path:
    """``folder`` with support.yaml and its tools' module written in it."""
    (folder / "support.yaml").write_text(SUPPORT)
    (folder / "shop.py").write_text(SHOP)
    return folder


# The cases the graded tests start from: a repeat, a judge, a simulated person.
FLIPS = """\
name: flips
repeat: 3
pass_at: 2
replies:
  desk:
    - {tool_calls: [{name: flip}]}
    - {echo: last}
expect:
  final: {equals: "yes"}
"""


JUDGED = """\
name: judged
replies: {desk: [Your order 42 is on its way.]}
expect:
  judge: {rubric: "Says where the order is.", provider: grader}
"""

ANGRY = """\
name: angry
user:
  role: You are an annoyed customer whose order 42 is late.
  provider: actor
  max_turns: 2
replies:
  desk: [Let me look., It ships today., Anything else?]
  actor: [This is taking forever!, {echo: last}]
expect:
  status: paused
  final: {equals: Anything else?}
"""
ACTOR = "providers:\n  actor: {kind: scripted, replies: [Hi]}\n"


def with_actor(path: Path) -> Path:
    path.write_text(path.read_text().replace("cases:\n", ACTOR + "cases:\n", 1))
    return path
