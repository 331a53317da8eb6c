"""The runs one server process drives: a queue per run, one step at a time, on one event loop.

Each run this worker is stepping has a ``RunSession`` (``serve/session.py``): a
task that holds the run's lease and takes its steps one after another (a
start, a retry, the messages waiting in its inbox) until there is nothing left
to do, then gives the lease back. Messages that arrive while a step runs wait in the inbox (in
the database, so a worker that dies loses none); consecutive ones from the
same person become one turn. Every run's events and the text of its model
answers go to the streams that watch it (``Watcher``); a run another worker
steps is followed by reading the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from datetime import datetime
from typing import Any

from roost.engine import Runner
from roost.engine.flows import flow_in_log
from roost.engine.images import start_images_async
from roost.engine.interpreter import start_route
from roost.errors import (
    RoostError,
    RunNotFoundError,
    RunStateError,
)
from roost.events import Event, InterruptEvent, event_dict
from roost.flow import Flow
from roost.flow.budget_checks import check_budget
from roost.ports import new_run_id
from roost.providers import limits
from roost.runstate import statuses
from roost.serve import budgets
from roost.serve._broadcast import Broadcast
from roost.serve._reads import RunReads
from roost.serve.config import ServeConfig
from roost.serve.errors import Busy, Draining
from roost.serve.flowdir import FlowDir
from roost.serve.metrics import ServeMetrics
from roost.serve.rows import run_row, waiting_for
from roost.serve.scheduler import Scheduler
from roost.serve.servefile import Schedule, flow_for, tick_key
from roost.serve.session import RunSession, StepCall
from roost.store.forks import check_fork_point, fork_refusal
from roost.store.leases import RunLeases, Stepping, stepper, takes_messages
from roost.store.sql import SqlStore
from roost.store.sqllog import SqlLog
from roost.store.ticks import ScheduleTicks
from roost.workspace import Workspace

log = logging.getLogger("roost.serve")

CANCEL_SECONDS = 5.0  # how long a cancelled step may take to be recorded and let go


class Hub:
    """The runs of one server process, its store, leases and flows."""

    def __init__(self, config: ServeConfig, store: SqlStore | None = None) -> None:
        self.config = config
        self.store = store or SqlStore(config.db)
        # Its runs' sub-flow runs, memory and images, kept in this store.
        self.workspace = Workspace(store=self.store)
        self.memory = self.workspace.memory  # what flows with a memory: section remember
        self.images = self.workspace.images  # the images of messages, served by hash
        self.leases = RunLeases(self.store, config.worker, seconds=config.lease_seconds)
        # The sub-flow runs a step drives here, held until that step ends (not retried or
        # sent to meanwhile, by this worker or another).
        self.stepping = Stepping(self.store, config.worker, seconds=config.lease_seconds)
        self.flows = FlowDir(config.flows)
        self.sessions: dict[str, RunSession] = {}
        self._runners: OrderedDict[str, Runner] = OrderedDict()
        self._poller: asyncio.Task[None] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._scheduler: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.broadcast = Broadcast(config.streams_per_client)  # what the streams are sent
        self.reads = RunReads(self.store, self.flows, self._runners.get)
        self.metrics = ServeMetrics(self)
        self.accepting = False  # takes new runs and messages (off before it opens, and draining)

    # ------------------------------------------------------------------ life

    async def open(self) -> None:
        self.metrics.start()
        self.accepting = True
        self._poller = asyncio.create_task(self._poll())
        self._heartbeat = asyncio.create_task(self._renew())
        if self.config.schedules:
            self._scheduler = asyncio.create_task(self._schedules().run())

    def _schedules(self) -> Scheduler:
        """The scheduler of this worker's schedules, firing runs through ``start_flow``."""

        async def fire(schedule: Schedule, tick: datetime) -> str:
            flow = flow_for(schedule, self.flows.load)
            title = f"{schedule.name} {tick_key(tick)}"
            return await self.start_flow(flow, schedule.message, None, None, title)

        ticks = ScheduleTicks(self.store, self.config.worker)
        clock = self.config.schedule_clock or time.time
        return Scheduler(self.config.schedules, ticks, fire, clock)

    async def drain(self, grace: float, hurry: asyncio.Event | None = None) -> None:
        """Stops taking work and lets the steps in flight end (``grace`` seconds at most, or
        until ``hurry`` is set), each lease handed back the moment its step ends so that
        another worker goes on with the run at once; a step still running then is
        cancelled as ``POST /cancel`` cancels one (recorded, ``retry`` redoes it)."""
        self.accepting = False
        for task in (self._scheduler, self._poller):  # no new runs, none taken over
            if task is not None:
                task.cancel()
        pending = {session.task for session in self.sessions.values()}
        if pending:
            log.warning("roost serve: draining: %d run(s) finish their step", len(pending))
        hurried = asyncio.ensure_future((hurry or asyncio.Event()).wait())
        deadline = time.monotonic() + grace
        while pending and not hurried.done() and (left := deadline - time.monotonic()) > 0:
            done, _ = await asyncio.wait(
                pending | {hurried}, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            pending -= done
        hurried.cancel()
        for session in list(self.sessions.values()):
            await self._cancel_left(session)

    async def _cancel_left(self, session: RunSession) -> None:
        """A step the grace did not see end: cancelled and recorded, its lease handed back."""
        if session.runner is not None and session.runner.cancel():
            log.warning("roost serve: run %s: step cancelled by the drain", session.run_id)
            # The cancel is recorded, then the session hands the lease back and ends.
            await asyncio.wait({session.task}, timeout=CANCEL_SECONDS)
        session.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await session.task
        with contextlib.suppress(RoostError):
            self.leases.hand_back(session.run_id)

    def check_accepting(self) -> None:
        """Draining when this server takes no new runs or messages."""
        if not self.accepting:
            raise Draining(
                "this server is stopping and takes no new runs or messages: "
                "send it to another worker, or again in a few seconds"
            )

    async def close(self) -> None:
        """Stops stepping: each run in flight is left for another worker (or a restart) to redo."""
        for task in (self._scheduler, self._poller, self._heartbeat):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for session in list(self.sessions.values()):
            session.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await session.task
            with contextlib.suppress(RoostError):
                self.leases.hand_back(session.run_id)
        self.stepping.close()
        self.metrics.stop()
        self.store.close()

    async def _poll(self) -> None:
        """Takes the runs whose worker stopped (their lease expired) and goes on with them."""
        while True:
            await asyncio.sleep(self.config.poll_seconds)
            try:
                for run_id in await asyncio.to_thread(self.leases.claim_due, 50):
                    if run_id not in self.sessions:
                        log.info("taking over run %s", run_id)
                        self._drive(run_id, None)
            except RoostError as error:
                log.warning("roost serve: %s", error)

    async def _renew(self) -> None:
        """Keeps the leases of the runs this worker steps, all in one statement each time;
        stops a session whose lease another worker took, and a step someone cancelled."""
        while True:
            await asyncio.sleep(self.config.poll_seconds)
            if not self.sessions:
                continue
            held = dict(self.sessions)
            try:
                # In a thread: a loop kept busy (many streams) must not let the leases
                # expire while their runs are stepped here.
                lost, cancels = await asyncio.to_thread(self.leases.renew_all, list(held))
            except RoostError as error:
                log.warning("roost serve: %s", error)
                continue
            for run_id in lost:
                session = self.sessions.get(run_id)
                # A session that gave its lease back meanwhile lost nothing, nor did the
                # one that took the run up again since, with a lease of its own.
                if session is held[run_id] and not session.leaving:
                    log.warning("roost serve: run %s: lost its lease; stopping", run_id)
                    session.task.cancel()
            for run_id in cancels:
                session = self.sessions.get(run_id)
                if session is not None and session.runner is not None:
                    session.runner.cancel()

    # ------------------------------------------------------------------ what the API asks

    async def start(
        self,
        flow_name: str,
        message: str | None,
        frm: str | None,
        to: str | None,
        title: str | None,
        budget: float | None = None,
    ) -> str:
        """Starts a run of a flow in the flows folder; its id once its first events are stored.

        ``budget`` is the run's cost limit, as ``roost run --budget`` sets it."""
        flow = self.flows.load(flow_name)
        return await self.start_flow(flow, message, frm, to, title, budget)

    async def start_flow(
        self,
        flow: Flow,
        message: str | None,
        frm: str | None,
        to: str | None,
        title: str | None,
        budget: float | None = None,
    ) -> str:
        """Starts a run of a loaded flow; its id once its first events are stored."""
        self.check_accepting()
        start_route(flow, message, frm, to)  # a bad route fails before a run is stored
        if budget is not None:
            check_budget(flow, budget)  # so does a cost limit its providers cannot keep
        images = await start_images_async(flow)  # so does a bad image
        run_id = new_run_id()
        runner = self._new_runner(flow, self.store.new_log(run_id, title=title))
        if budget is not None:
            runner.set_budget(budget)  # recorded with the start, as the command line does
        await asyncio.to_thread(self.leases.claim, run_id, work=True)
        session = self._drive(
            run_id, lambda r: r.start(message, from_=frm, to=to, images=images), runner
        )
        await session.begun()
        return run_id

    async def fork(self, run_id: str, at: int, message: str | None) -> str:
        """A new run sharing the first ``at`` events of ``run_id``, going on from there."""
        self.check_accepting()
        new_id = new_run_id()
        log_, prefix = await asyncio.to_thread(self._forked, run_id, at, message, new_id)
        runner = self._new_runner(flow_in_log(prefix, f"run {new_id}"), log_)
        status = runner.state.status
        first: StepCall | None
        if status == "new":
            first = lambda r: r.start(message)  # noqa: E731
        elif status == "paused":
            first = None if message is None else (lambda r: r.continue_(message))
        else:
            first = lambda r: r.retry()  # noqa: E731
        await asyncio.to_thread(log_.materialize)
        self._runners[new_id] = runner
        if first is not None:
            await asyncio.to_thread(self.leases.claim, new_id, work=True)
            await self._drive(new_id, first, runner).begun()
        return new_id

    def _forked(
        self, run_id: str, at: int, message: str | None, new_id: str
    ) -> tuple[SqlLog, list[Event]]:
        """The log of a new fork of ``run_id`` at ``at``, and the events it shares (read in a
        thread); a fork point the run cannot go on from is refused."""
        info = self.store.run(run_id)
        events = self.store.log(info.id).load()
        status_at = statuses(events)
        with_message = message is not None

        def refuse(point: int) -> str | None:
            return fork_refusal(status_at[point], with_message)

        check_fork_point(info.id, len(events), at, lambda: events, refuse)
        log_ = self.store.fork(info.id, at, new_id)
        return log_, log_.load()

    async def send(self, run_id: str, content: str, sender: str | None) -> int:
        """Queues a person's message or answer; the number of messages waiting for the run.

        The store is read and written in a thread: the event loop steps the other runs
        meanwhile."""
        self.check_accepting()
        waiting = await asyncio.to_thread(self._enqueue, run_id, content, sender)
        await self._wake(run_id)
        return waiting

    def _enqueue(self, run_id: str, content: str, sender: str | None) -> int:
        info = self.store.run(run_id)
        if info.status not in ("paused", "running"):
            hints = {
                "terminated": "it has terminated; fork it to go on from an earlier point",
                "error": "it stopped at an error; retry it first",
                "new": "it has not started",
            }
            raise RunStateError(
                f"run {run_id} is not waiting for a message: {hints.get(info.status, info.status)}"
            )
        if sender is not None and info.status == "paused" and not self.busy(run_id):
            pending = self.reads.state(run_id)[1].pending
            if isinstance(pending, InterruptEvent) and pending.from_ != sender:
                raise RunStateError(f"run {run_id} waits for {pending.from_}, not {sender}")
        if info.status == "paused" and not self.busy(run_id):
            budgets.check_answer(self.reads.state(run_id)[1], content)  # refused now, not queued
        holder = self.leases.holder(run_id)
        if holder.alive(time.time()) and not takes_messages(holder.owner):
            raise Busy(
                f"run {run_id} is being stepped by {stepper(holder.owner)}: "
                "send to it once that has ended"
            )
        return self.leases.enqueue(run_id, content, sender, self.config.queue_limit)

    async def retry(self, run_id: str) -> None:
        """Redoes the step a run stopped at (an error, or a step its worker did not finish)."""
        self.check_accepting()
        if self.busy(run_id):
            raise Busy(f"run {run_id} is taking a step now; retry it once that step has ended")
        await self._let_go(run_id)
        await asyncio.to_thread(self._claim_retry, run_id)
        if run_id in self.sessions:  # a message woke the run meanwhile: it is stepped already
            return
        self._drive(run_id, lambda r: r.retry())

    async def _let_go(self, run_id: str) -> None:
        """Waits for a session whose step has ended (a cancel, an error) to hand the run's
        lease back, which it does in a thread: a retry sent just after the answer to
        ``POST /cancel`` is not refused because that thread has not run yet."""
        session = self.sessions.get(run_id)
        if session is not None and not self.busy(run_id):
            # ``wait`` leaves the task alone: a session that goes on (a message came) stays.
            await asyncio.wait({session.task}, timeout=CANCEL_SECONDS)

    def _claim_retry(self, run_id: str) -> None:
        """The run's lease, for a retry, if the run stopped where a retry goes on."""
        info = self.store.run(run_id)
        # Its status first: a run that ended is told so, even while the session that took
        # its last step is still handing its lease back.
        if info.status not in ("error", "running"):
            raise RunStateError(
                f"run {run_id} is {info.status}: only a run stopped at an error "
                "(or left running by a process that stopped) can be retried"
            )
        if run_id in self.sessions or not self._free(run_id):
            raise Busy(f"run {run_id} is taking a step now; retry it once that step has ended")
        if not self.leases.claim(run_id, work=True):
            raise Busy(f"run {run_id} is taking a step now; retry it once that step has ended")

    async def cancel(self, run_id: str) -> int:
        """Stops the step in flight and drops the messages waiting; how many were dropped."""
        await asyncio.to_thread(self.store.run, run_id)
        session = self.sessions.get(run_id)
        if session is not None and session.runner is not None and session.runner.busy:
            dropped = await asyncio.to_thread(self.leases.clear, run_id)
            session.runner.cancel()
            await session.rested()
            return dropped
        if session is None and await asyncio.to_thread(self.leases.ask_cancel, run_id):
            # The worker stepping it cancels within a second.
            return await asyncio.to_thread(self.leases.clear, run_id)
        raise RunStateError(f"run {run_id} is not taking a step: there is nothing to cancel")

    def busy(self, run_id: str) -> bool:
        session = self.sessions.get(run_id)
        if session is not None:
            return session.runner is not None and session.runner.busy
        return not self._free(run_id)

    def summary(self, run_id: str) -> dict[str, Any]:
        """What ``GET /runs/{id}`` answers: the run's row, where it stands, what it waits for."""
        with self.reads.lock:  # a kept state is not moved on by another read meanwhile
            info, state, flow = self.reads.state(run_id)
            answer = {
                **run_row(info),
                "status": state.status,
                "pending": event_dict(state.pending) if state.pending is not None else None,
                "waiting_for": waiting_for(flow, state),
                "terminated_by": state.terminated_by,
                "answer": state.answer,
                "usage": state.usage.model_dump(),
            }
        return {
            **answer,
            "cost": self.reads.cost(info),
            "busy": self.busy(run_id),
            "queued": self.leases.waiting(run_id),
            "waiting_on_limits": limits.waiting_runs.get(run_id, 0),
            "budget": budgets.standing(state),
        }

    # ------------------------------------------------------------------ internals

    def _free(self, run_id: str) -> bool:
        return not self.leases.holder(run_id).alive(time.time())

    async def _wake(self, run_id: str) -> None:
        """Starts delivering a run's messages here, unless a worker is at it already."""
        while (session := self.sessions.get(run_id)) is not None:
            if not session.leaving:
                return  # its session takes them before it lets the run go
            # It is handing the lease back (in a thread): it either sees the message and
            # stays, or has let the run go, and the run is claimed here.
            await session.left.wait()
        claimed = await asyncio.to_thread(self.leases.claim, run_id, work=True)
        if claimed and run_id not in self.sessions:
            self._drive(run_id, None)

    def _drive(
        self, run_id: str, first: StepCall | None, runner: Runner | None = None
    ) -> RunSession:
        if runner is not None:
            self._runners[run_id] = runner
        session = RunSession(self, run_id, first)
        self.sessions[run_id] = session
        session.task = asyncio.create_task(session.run(), name=f"roost run {run_id}")
        return session

    async def runner(self, run_id: str) -> Runner:
        """The run's Runner, kept between steps while its state is the stored one (the
        store read in a thread)."""
        runner = self._runners.get(run_id)
        try:
            info = await asyncio.to_thread(self.store.run, run_id)
        except RunNotFoundError:
            if runner is not None and runner.state.next_seq == 0:
                return runner  # a new run: stored with its first events
            raise
        if runner is not None and runner.state.next_seq == info.next_seq:
            self._runners.move_to_end(run_id)
            return runner
        log_ = SqlLog(self.store, info)
        events = await asyncio.to_thread(log_.load)
        runner = self._new_runner(flow_in_log(events, f"run {run_id}"), log_)
        self._runners[run_id] = runner
        while len(self._runners) > self.config.cached_runs:
            oldest = next(iter(self._runners))
            if oldest in self.sessions:
                self._runners.move_to_end(oldest)
                break
            del self._runners[oldest]
        return runner

    def forget(self, run_id: str) -> None:
        self._runners.pop(run_id, None)

    def _new_runner(self, flow: Flow, log_: Any) -> Runner:
        run_id = log_.run_id

        def on_event(event: Event) -> None:
            session = self.sessions.get(run_id)
            if session is not None:
                session.delivered(event)
            self.broadcast.publish(run_id, {"type": "event", "event": event})

        def on_text(node: str, text: str) -> None:
            self.broadcast.publish(run_id, {"type": "delta", "node": node, "text": text})

        def hold(child_id: str) -> None:
            self.stepping.hold(child_id, group=run_id)  # until the parent's step ends

        return self.workspace.runner(
            flow, log_, memory=self.memory, images=self.images, hold=hold,
            on_event=on_event, on_text=on_text,
        )  # fmt: skip
