"""How ``roost chat`` runs one step: Ctrl-C and /stop stop it, and the chat goes on.

Also what a stopped step leaves (the fork point before the person's line) and the
closing of the chat's event loop.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from roost.events import ErrorEvent, Event, InterruptEvent

if TYPE_CHECKING:
    from collections.abc import Iterator


class Stoppable(Protocol):
    """What Ctrl-C sets: the chat's request to stop the step in flight."""

    stopping: bool


LOOK = 0.1  # seconds between two looks for /stop while a step runs


def is_terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal (an input made by other means, a test's, is not)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def was_stopped(pending: object) -> bool:
    """Whether the run stopped at the error a stopped (cancelled) step records."""
    from roost.engine.runner import CANCELLED

    return isinstance(pending, ErrorEvent) and pending.content == CANCELLED


@contextmanager
def ctrl_c_stops(chat: Stoppable) -> Iterator[None]:
    """While a step runs, Ctrl-C asks it to stop; a second Ctrl-C leaves the chat.

    The handler only sets a flag that the step's watcher reads: it runs between two
    bytecodes, anywhere, and must not print or touch the event loop.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only: nothing to catch here
        return

    def pressed(signum: int, frame: object) -> None:
        from roost.store.interrupts import interrupt_now_or_after_the_batch

        if chat.stopping:
            interrupt_now_or_after_the_batch()  # the second press: leave, the run is stored
        chat.stopping = True

    previous = signal.signal(signal.SIGINT, pressed)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def after_stop(events: list[Event]) -> str:
    """What a stopped step leaves the person: ask again, or go back before their line."""
    back = before_the_line(events)
    return (
        f"the run is kept; /retry asks again, /fork {back} goes back to before "
        "your line (to say something else)"
    )


def before_the_line(events: list[Event]) -> int:
    """The fork point just before the person's latest line: after the interrupt it answered,
    or after the run's start when it started the run."""
    waits = [event.seq for event in events if isinstance(event, InterruptEvent)]
    return waits[-1] + 1 if waits else 1


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Closes the chat's event loop, ending first what a Ctrl-C left under way on it."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
