"""Python tools used by the tools tests (loaded from the flow's folder)."""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass
from typing import Literal

from sibling_helper import shout

NOT_CALLABLE = 42
CALLS: list[str] = []


def add(a: int, b: int = 2) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def slow_echo(text: str, delay: float = 0.2) -> str:
    """Echo text after a pause (async)."""
    await asyncio.sleep(delay)
    return text


# A meeting is proof by events that calls overlap: each call waits at a barrier
# until ``parties`` calls of its group are waiting together. Calls that ran one
# after another never meet, and the wait gives up (an error result) instead of
# hanging; the bound is a safety net, not a measure of speed.
MEETING_WAIT = 30.0
_MEETINGS: dict[str, threading.Barrier] = {}
_MEETINGS_LOCK = threading.Lock()


def _meeting(group: str, parties: int) -> threading.Barrier:
    with _MEETINGS_LOCK:
        return _MEETINGS.setdefault(group, threading.Barrier(parties))


def meet(group: str, parties: int) -> str:
    """Returns once ``parties`` calls of ``group`` are running at once (sync, runs in a thread)."""
    _meeting(group, parties).wait(MEETING_WAIT)
    return f"met {group} in {threading.current_thread().name}"


async def meet_async(group: str, parties: int) -> str:
    """Returns once ``parties`` calls of ``group`` are running at once (async)."""
    await asyncio.to_thread(_meeting(group, parties).wait, MEETING_WAIT)
    return f"met {group}"


def fail(reason: str) -> str:
    """Always raises."""
    raise ValueError(reason)


@dataclass
class Point:
    x: int
    y: int


def point(x: int, y: int, unit: Literal["cm", "m"] = "m") -> dict[str, object]:
    """Make a point; returns a mapping (given back as JSON)."""
    return {"point": Point(x, y), "unit": unit}


def loud(word: str) -> str:
    """Shout a word using a sibling module."""
    return shout(word)


def nothing() -> None:
    """Returns nothing."""


def only_positional(a: int, /, b: int) -> int:
    """a - b, with a positional-only parameter."""
    return a - b


def with_kwargs(name: str, **extra: int) -> str:
    """Accepts extra keyword arguments."""
    return f"{name}:{sorted(extra.items())}"


class Opaque:
    pass


def takes_opaque(thing: Opaque) -> str:
    """Its parameter has a type pydantic cannot describe."""
    return "never"


def record(word: str) -> str:
    """Remembers a word (a side effect that shows how often it ran)."""
    CALLS.append(word)
    return f"recorded {word}"


def record_untyped(word):  # type: ignore[no-untyped-def]
    """Remembers anything, as nothing in its signature says what a word is."""
    CALLS.append(repr(word))
    return f"recorded {word}"


def odd_names(json: bool, schema: str = "s", model_config: int = 0, _hidden: int = 1) -> str:
    """Parameters named like pydantic's own attributes."""
    return f"{json} {schema} {model_config} {_hidden}"


def untyped(value, count=1):  # type: ignore[no-untyped-def]
    """No hints: anything goes."""
    return [value] * count


def exits(code: int | str | None = 7) -> str:
    """Ends the process, were it not a tool (sync, runs in a thread)."""
    sys.exit(code)


async def exits_async() -> str:
    """Ends the process, were it not a tool (async)."""
    sys.exit(3)


def closes() -> str:
    """Raises a BaseException that is neither an exit nor a cancellation."""
    raise GeneratorExit("closed by the tool")
