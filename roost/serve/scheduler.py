"""Starting scheduled runs on time, at most once per tick however many workers run.

At each look, a worker takes every tick of every schedule that came since it
last looked. The latest one, if it came less than ``GRACE_SECONDS`` ago, is
fired: its row is claimed in the store (one worker wins) and the winner starts
the run. Older ticks came while no worker was looking (all were down): each is
claimed as ``missed``, recorded once and never fired. When a worker starts, it
looks back to the last tick any worker handled, so a tick missed during a
restart is recorded; a schedule never handled before starts from now.

The clock is injected (seconds since the epoch), so that tests step time by
hand; ``roost serve`` reads ``ROOST_SCHEDULE_NOW`` to start its clock at a
given moment (see ``clock_from``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from roost.errors import RoostError, UsageError
from roost.serve.servefile import Schedule, parse_tick_key, tick_key
from roost.store.ticks import FIRED, MISSED, ScheduleTicks

log = logging.getLogger("roost.serve")

Clock = Callable[[], float]
Fire = Callable[[Schedule, datetime], Awaitable[str]]  # starts the run; its id

GRACE_SECONDS = 60.0  # a tick found later than this after its time is missed, not fired
MOST_MISSED = 1000  # ticks recorded as missed in one look; older ones are not recorded
LONGEST_NAP = 1.0  # seconds between looks at most: a clock set forward is noticed soon


@dataclass(frozen=True, slots=True)
class Due:
    """A tick to handle: fire it, or record it as missed."""

    schedule: Schedule
    tick: datetime
    fire: bool


@dataclass(frozen=True, slots=True)
class Handled:
    """What this worker did with a tick: claimed it (``won``) and, when fired, the run."""

    schedule: str
    tick: str
    status: str
    won: bool
    run: str | None = None
    error: str | None = None


def due_ticks(schedule: Schedule, since: float, now: float, grace: float) -> list[Due]:
    """The ticks of ``schedule`` in (since, now]: the latest fired if within ``grace``."""
    ticks: list[datetime] = []
    for tick in schedule.ticks_after(since):
        if tick.timestamp() > now:
            break
        ticks.append(tick)
        if len(ticks) > MOST_MISSED:
            del ticks[0]
    return [
        Due(schedule, tick, fire=index == len(ticks) - 1 and now - tick.timestamp() <= grace)
        for index, tick in enumerate(ticks)
    ]


class Scheduler:
    """One worker's side of the schedules: looks at the clock, claims ticks, fires runs."""

    def __init__(
        self,
        schedules: Sequence[Schedule],
        ticks: ScheduleTicks,
        fire: Fire,
        clock: Clock = time.time,
        *,
        grace: float = GRACE_SECONDS,
    ) -> None:
        self.schedules = tuple(schedules)
        self.ticks = ticks
        self.fire = fire
        self.clock = clock
        self.grace = grace
        self._since: dict[str, float] = {}

    def begin(self) -> None:
        """Where each schedule's looks start: its last handled tick, else now."""
        now = self.clock()
        for schedule in self.schedules:
            last = self.ticks.last(schedule.name)
            self._since[schedule.name] = now if last is None else min(parse_tick_key(last), now)

    async def look(self) -> list[Handled]:
        """Handles every tick that came since the last look; what this worker did."""
        if not self._since:
            self.begin()
        now = self.clock()
        handled: list[Handled] = []
        for schedule in self.schedules:
            for due in due_ticks(schedule, self._since[schedule.name], now, self.grace):
                handled.append(await self._handle(due))
            self._since[schedule.name] = max(self._since[schedule.name], now)
        return handled

    async def _handle(self, due: Due) -> Handled:
        name, key = due.schedule.name, tick_key(due.tick)
        status = FIRED if due.fire else MISSED
        if not self.ticks.claim(name, key, status):
            return Handled(name, key, status, won=False)  # another worker handled it
        if not due.fire:
            log.warning("roost serve: schedule %s: missed the tick of %s", name, key)
            return Handled(name, key, status, won=True)
        try:
            run_id = await self.fire(due.schedule, due.tick)
        except RoostError as error:
            reason = str(error).splitlines()[0]
            log.warning("roost serve: schedule %s: tick %s: %s", name, key, reason)
            self.ticks.finish(name, key, run=None, error=reason)
            return Handled(name, key, status, won=True, error=reason)
        self.ticks.finish(name, key, run=run_id, error=None)
        log.info("roost serve: schedule %s: tick %s started run %s", name, key, run_id)
        return Handled(name, key, status, won=True, run=run_id)

    def nap(self) -> float:
        """Seconds until the next tick of any schedule (at most ``LONGEST_NAP``)."""
        now = self.clock()
        soonest = min((s.next_after(now).timestamp() for s in self.schedules), default=now)
        return max(0.01, min(LONGEST_NAP, soonest - now))

    async def run(self) -> None:
        """Looks at each tick until cancelled; a store error is logged and looked at again."""
        while True:
            try:
                await self.look()
            except RoostError as error:
                log.warning("roost serve: schedules: %s", error)
            await asyncio.sleep(self.nap())


def clock_from(setting: str | None) -> Clock:
    """The scheduler's clock: the real one, or one started at ``setting`` (ISO 8601).

    ``ROOST_SCHEDULE_NOW=2026-01-05T08:59:58Z roost serve ...`` runs the schedules as
    though they started at that moment, time then passing as usual: a way to
    see a configuration fire without waiting for its hour (and how the tests do).
    """
    if not setting:
        return time.time
    try:
        start = datetime.fromisoformat(setting.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"ROOST_SCHEDULE_NOW={setting!r}: expected a moment such as 2026-01-05T08:59:58Z"
        ) from None
    if start.tzinfo is None:
        raise UsageError(f"ROOST_SCHEDULE_NOW={setting!r}: give a time zone (Z for UTC)")
    return _StartedClock(start.timestamp())


class _StartedClock:
    """A clock that reads ``start`` when first asked, then moves with real time.

    It starts on its first reading, not when made: the scheduler's first look
    (however long the server took to start) sees exactly the moment given.
    """

    def __init__(self, start: float) -> None:
        self.start = start
        self.offset: float | None = None

    def __call__(self) -> float:
        if self.offset is None:
            self.offset = self.start - time.time()
        return time.time() + self.offset
