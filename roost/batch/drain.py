"""Stopping a batch as ``roost serve`` stops: SIGTERM lets the rows in flight end, starts none.

The first SIGTERM stops the batch from starting rows; the rows running go on
for ``--grace`` seconds at most (a second SIGTERM cuts that short). A row still
running then has its step cancelled as ``POST /cancel`` cancels one: recorded,
so the next ``roost batch`` retries it from its log. The rows that never
started are written to the results as ``skipped``, and the next run of the same
command runs them (they have no finished run).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.engine import Runner

# How long a draining process lets its steps in flight finish before it cancels them:
# `roost batch --grace` and `roost serve --grace` alike.
GRACE_SECONDS = 30.0
SETTLE_SECONDS = 5.0  # a cancelled step's record, written before its row's task is cut


class Drain:
    """Whether the batch still starts rows, and the runners of the rows in flight."""

    def __init__(self, grace: float = GRACE_SECONDS) -> None:
        self.grace = grace
        self.stopping = False
        self.runners: set[Runner] = set()
        self._stopped = asyncio.Event()
        self._hurry = asyncio.Event()

    def stop(self) -> None:
        """A signal: the first stops new rows, the second cancels the rows still running."""
        if self.stopping:
            self._hurry.set()
        self.stopping = True
        self._stopped.set()

    @property
    def hurried(self) -> bool:
        """A second signal came: the rows still running are cancelled now."""
        return self._hurry.is_set()

    async def wait(self, rows: set[asyncio.Task[None]]) -> None:
        """Returns once every row ended; once stopped, once the grace let them end or ran out."""
        pending = await _first(rows, self._stopped, None)
        if pending:
            pending = await _first(pending, self._hurry, self.grace)
        if pending:
            await self._cancel(pending)
        for row in rows:  # a failure of roost's own is not lost
            if row.done() and not row.cancelled():
                row.result()

    async def _cancel(self, rows: set[asyncio.Task[None]]) -> None:
        for runner in list(self.runners):
            runner.cancel()  # recorded as a cancelled step: the next batch retries it
        await asyncio.wait(rows, timeout=SETTLE_SECONDS)
        for row in rows:
            row.cancel()  # a row not yet at its first step: retried from its log next time
        await asyncio.wait(rows)


async def _first(
    rows: set[asyncio.Task[None]], event: asyncio.Event, seconds: float | None
) -> set[asyncio.Task[None]]:
    """Waits until every row ended, ``event`` is set or ``seconds`` passed; the rows left."""
    pending = {row for row in rows if not row.done()}
    woken = asyncio.ensure_future(event.wait())
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        while pending and not woken.done():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            done, _ = await asyncio.wait(
                pending | {woken}, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            pending -= done
    finally:
        woken.cancel()
    return pending


@contextlib.contextmanager
def on_sigterm(drain: Drain) -> Iterator[None]:
    """SIGTERM stops ``drain`` while the block runs on the current event loop."""
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, drain.stop)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
