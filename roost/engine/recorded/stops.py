"""Where the recorded process stopped, and the replay's position against those points.

A recorded run whose process died mid-step (or was forked mid-step), then
retried, is replayed up to the same event: the call made there stops the
replay (``ProcessStopped``) so that the retry redoes the same step. A step the
record shows cancelled is cancelled again at the same point.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from roost.ports import MemoryLog

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.engine.sources import RunPosition
    from roost.events import Event


class ProcessStopped(BaseException):
    """The replayed run reached a point where the recorded process had stopped.

    A BaseException, like a cancellation, so that the engine's handlers of a
    failing model or tool let it through instead of recording it as a failure.
    """


class Stops:
    """The seqs where the recorded process stopped, and the replay's position."""

    def __init__(self, points: list[int], cancels: list[int] | None = None) -> None:
        self.points = sorted(points)
        self.cancels = sorted(cancels or [])  # where the recorded run cancelled a step
        self._run: RunPosition | None = None  # the replaying run, once bound

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def next_seq(self) -> int:
        return self._run.state.next_seq if self._run is not None else 0

    def reached(self, upto: int | None = None) -> int | None:
        """The next stop point when the run is at or past it, else None."""
        position = self.next_seq() if upto is None else upto
        if self.points and position >= self.points[0]:
            return self.points[0]
        return None

    def stop_here(self) -> None:
        """Stops a model or tool call made where the recorded process had stopped."""
        point = self.reached()
        if point is not None:
            raise ProcessStopped(f"stopped before event {point}")

    async def cancel_if_due(self) -> None:
        """Cancels the step, as the recorded one was, when a model or tool call is made
        where the recorded run cancelled it: the runner records the same events."""
        if self.cancels and self.next_seq() >= self.cancels[0]:
            self.cancels.pop(0)
            if self._run is not None:
                self._run.cancel()
            await asyncio.sleep(0)  # the cancellation lands here, inside the call

    def resume(self) -> None:
        """Goes past the stop point the run stopped at (its retry is being replayed)."""
        if self.points:
            self.points.pop(0)


class StoppingLog(MemoryLog):
    """A memory log that stops the run where the recorded process stopped."""

    def __init__(self, run_id: str, stops: Stops) -> None:
        super().__init__(run_id)
        self.stops = stops

    def append(self, events: Sequence[Event]) -> None:
        point = self.stops.reached(events[-1].seq) if events else None
        if point is None:
            super().append(events)
            return
        super().append([e for e in events if e.seq < point])
        raise ProcessStopped(f"stopped before event {point}")
