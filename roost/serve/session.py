"""A worker's turn at one run (``RunSession``): its steps one at a time while it holds the
run's lease, the queued messages each step answers, and the lease handed back when the
run rests. The ``Hub`` starts a session for a run and keeps it while it lasts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from roost.errors import (
    ConcurrentRunError,
    EventLogError,
    RoostError,
    RunNotFoundError,
    RunStateError,
    UsageError,
)
from roost.events import Event, InterruptEvent
from roost.providers import limits
from roost.store.leases import Queued

if TYPE_CHECKING:
    from roost.engine import Runner
    from roost.runstate import RunState
    from roost.serve._broadcast import Broadcast
    from roost.serve.config import ServeConfig
    from roost.serve.metrics import ServeMetrics
    from roost.store.leases import RunLeases, Stepping

log = logging.getLogger("roost.serve")

StepCall = Callable[["Runner"], Awaitable["RunState"]]


class Hub(Protocol):
    """What a session needs of the ``Hub`` that keeps it (``serve/hub.py``)."""

    accepting: bool
    config: ServeConfig
    leases: RunLeases
    stepping: Stepping
    metrics: ServeMetrics
    sessions: dict[str, RunSession]

    async def runner(self, run_id: str) -> Runner: ...

    def forget(self, run_id: str) -> None: ...

    @property
    def broadcast(self) -> Broadcast: ...


class RunSession:
    """This worker's turn at one run: its steps, one at a time, while it holds the lease."""

    def __init__(self, hub: Hub, run_id: str, first: StepCall | None) -> None:
        self.hub = hub
        self.run_id = run_id
        self.first = first
        self.runner: Runner | None = None
        self.task: asyncio.Task[None]
        self.appended = asyncio.Event()  # the first events of this session are stored
        self._delivering: list[int] = []  # inbox ids of the messages the step in flight answers
        self._rest = asyncio.Event()  # no step is running
        self._rest.set()
        # Handing the lease back, in a thread: a message sent meanwhile waits for the answer
        # (``Hub._wake``), so that it is never left in the inbox of a run nobody steps.
        self.leaving = False
        self.left = asyncio.Event()

    async def begun(self) -> None:
        """Returns once the session has stored its first events, or ended without any."""
        appended = asyncio.ensure_future(self.appended.wait())
        try:
            await asyncio.wait({self.task, appended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            appended.cancel()

    async def rested(self) -> None:
        await self._rest.wait()

    async def run(self) -> None:
        hub = self.hub
        limits.for_run(self.run_id)  # its calls waiting for a provider's limits are counted
        try:
            while True:
                runner = self.runner = await hub.runner(self.run_id)
                if not hub.accepting and self.first is None and await self._leave(runner):
                    break
                step = self.first or await self._next(runner)
                self.first = None
                if step is None:
                    self.leaving = True
                    self.left.clear()
                    if await asyncio.to_thread(hub.leases.release, self.run_id):
                        break  # still leaving: it ends without a turn of the loop between
                    self.leaving = False
                    self.left.set()
                    # A message came in meanwhile: the next round delivers it or drops it.
                    # Yield first, so that no round of this loop can hold the event loop.
                    await asyncio.sleep(0)
                    continue
                await self._take(runner, step)
        except asyncio.CancelledError:
            raise
        except RoostError as error:
            # The store failed, or the run cannot be read: another worker may try later.
            log.warning("roost serve: run %s: %s", self.run_id, error)
            hub.broadcast.publish(self.run_id, {"type": "notice", "message": str(error)})
            with contextlib.suppress(RoostError):
                hub.leases.hand_back(self.run_id, after=hub.config.lease_seconds)
        except Exception:
            log.exception("roost serve: run %s failed", self.run_id)
            with contextlib.suppress(RoostError):
                hub.leases.hand_back(self.run_id, after=hub.config.lease_seconds)
        finally:
            if hub.sessions.get(self.run_id) is self:
                del hub.sessions[self.run_id]
            self._rest.set()
            self.left.set()

    async def _leave(self, runner: Runner) -> bool:
        """Draining: the lease goes back now, the work with it (a retry left to do, messages
        waiting) for another worker to take at once; True when the session is to stop."""
        return await asyncio.to_thread(self._hand_over, runner.state.status)

    def _hand_over(self, status: str) -> bool:
        leases = self.hub.leases
        if status != "running" and not leases.waiting(self.run_id):
            return leases.release(self.run_id)  # nothing to do: the run is simply let go
        leases.hand_back(self.run_id)
        return True

    async def _next(self, runner: Runner) -> StepCall | None:
        """What the run needs next: a step its last worker left undone, or messages to deliver."""
        state = runner.state
        if state.status == "running":
            return lambda r: r.retry()
        queued = await asyncio.to_thread(self.hub.leases.inbox, self.run_id)
        if not queued:
            return None
        if state.status != "paused" or not isinstance(state.pending, InterruptEvent):
            await self._drop(queued, state.status)
            return None
        pending = state.pending
        turn, refused = one_turn(queued, pending)
        for message in refused:
            self._refuse(
                message, f"run {self.run_id} waits for {pending.from_}, not {message.sender}"
            )
        if not turn:
            await asyncio.to_thread(self.hub.leases.remove, [m.id for m in refused])
            return await self._next(runner)
        if refused:
            await asyncio.to_thread(self.hub.leases.remove, [m.id for m in refused])
        return self._deliver(turn)

    def _deliver(self, turn: list[Queued]) -> StepCall:
        text = "\n\n".join(message.content for message in turn)
        leases = self.hub.leases

        async def deliver(runner: Runner) -> RunState:
            # The messages leave the inbox with the resume that answers them, the moment it
            # is stored (``delivered``): a worker that dies before then leaves them waiting.
            self._delivering = [m.id for m in turn]
            try:
                return await runner.continue_(text)
            # An answer the run cannot take (a wrong name, a budget's limit not above what
            # was spent): refused before anything is recorded.
            except (RunStateError, UsageError) as error:
                leases.remove(self._delivering)
                for message in turn:
                    self._refuse(message, str(error))
                return runner.state
            finally:
                self._delivering = []

        return deliver

    def delivered(self, event: Event) -> None:
        """Called with each event this session stores: a resume takes its messages away."""
        self.appended.set()
        self.hub.metrics.event(event, self.runner.flow if self.runner is not None else None)
        if self._delivering and event.type == "resume":
            ids, self._delivering = self._delivering, []
            self.hub.leases.remove(ids)

    async def _drop(self, queued: list[Queued], status: str) -> None:
        """Drops messages the run can no longer take (it ended, or stopped at an error
        while they waited), each with a notice on the run's streams."""
        why = {
            "terminated": "the run terminated before it could take it",
            "error": "the run stopped at an error before it could take it; retry it first",
        }.get(status, f"the run is {status}, not waiting for a message")
        for message in queued:
            self._refuse(message, why)
        await asyncio.to_thread(self.hub.leases.remove, [m.id for m in queued])
        self.hub.broadcast.publish(
            self.run_id, {"type": "state", "status": status}
        )  # nothing queued now

    def _refuse(self, message: Queued, why: str) -> None:
        self.hub.broadcast.publish(
            self.run_id,
            {
                "type": "notice",
                "message": f"message not delivered: {why}",
                "content": message.content,
            },
        )

    async def _take(self, runner: Runner, step: StepCall) -> None:
        self._rest.clear()
        self.appended.clear()
        try:
            state = await step(runner)
        except ConcurrentRunError:
            self.hub.forget(self.run_id)  # another process moved the run on: read it again
            return
        except RunStateError as error:
            self.hub.broadcast.publish(self.run_id, {"type": "notice", "message": str(error)})
            return
        except (EventLogError, RunNotFoundError):
            raise
        finally:
            self.hub.stepping.release(self.run_id)  # the sub-flow runs this step drove
            self._rest.set()
        self.hub.metrics.stepped(runner.flow)
        self.hub.broadcast.publish(self.run_id, {"type": "state", "status": state.status})


def one_turn(queued: list[Queued], pending: InterruptEvent) -> tuple[list[Queued], list[Queued]]:
    """The messages that make the next turn, and those refused before them.

    A person's turn takes every message waiting from the same sender, in order;
    an approval or a choice of speaker takes one answer.
    """
    turn: list[Queued] = []
    refused: list[Queued] = []
    for message in queued:
        if message.sender is not None and message.sender != pending.from_:
            if turn:
                break
            refused.append(message)
            continue
        turn.append(message)
        if pending.reason in ("tool_approval", "tool_plan", "manual_select"):
            break
    return turn, refused
