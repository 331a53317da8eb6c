"""What the server reads of its runs: a run's state, its flow, its cost, its new events.

A run stepped here is read from its live Runner (on the event loop only, where no
step moves it on meanwhile); any other run is folded from the store, its new
events taken on to the state kept for it, so that a stream following a long run
reads each event once, not the whole log at each step. Reads made in threads
(``to_thread``) share those kept states under one lock.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from roost.engine.flows import flow_in_force
from roost.errors import EventLogError, RoostError
from roost.pricing import CostTally
from roost.runstate import RunState, apply, fold
from roost.store.sqllog import SqlLog

if TYPE_CHECKING:
    from roost.engine import Runner
    from roost.events import Event, FlowRecord
    from roost.flow import Flow
    from roost.serve.flowdir import FlowDir
    from roost.store.sql import RunInfo, SqlStore

STATES_KEPT = 256  # states of runs stepped elsewhere kept for the streams that watch them


def _on_loop() -> bool:
    """Whether this code runs on the event loop (not in a thread of ``to_thread``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RunReads:
    """The server's reads of runs, from the live runner or from the store."""

    def __init__(
        self, store: SqlStore, flows: FlowDir, live: Callable[[str], Runner | None]
    ) -> None:
        self.store = store
        self.flows = flows
        self._live = live  # the Runner stepping a run here, if any
        # The state of runs not stepped here, by the next_seq it was folded at: many
        # streams on one run fold its log once per step, not once each (read in threads).
        self._states: OrderedDict[str, tuple[int, RunState, Flow | None]] = OrderedDict()
        self.lock = threading.RLock()  # held while a kept state or cost is read or moved on
        # What each run's calls cost, by the next_seq it was priced at (read in threads).
        self._costs: OrderedDict[str, tuple[int, CostTally]] = OrderedDict()
        # The reads of new events in flight, shared by the streams that ask the same.
        self._reads: dict[tuple[str, int, int | None], asyncio.Future[list[Event]]] = {}

    def state(self, run_id: str) -> tuple[RunInfo, RunState, Flow | None]:
        """A run's row, its state, and the flow it follows (None when that does not load)."""
        info = self.store.run(run_id)
        runner = self._live(run_id)
        # The live state is read only on the loop, where no step moves it on meanwhile; a
        # thread (GET /runs/{id}) folds the stored events up to the row it read, so that
        # what it answers agrees with the row (a run terminated, its tokens counted).
        if runner is not None and runner.state.next_seq == info.next_seq and _on_loop():
            return info, runner.state, self.flows.shown(runner.flow.path, runner.flow.text)
        with self.lock:
            return (info, *self._folded(info))

    def _folded(self, info: RunInfo) -> tuple[RunState, Flow | None]:
        """The state of a run not stepped here, its new events taken on to the one kept;
        called with ``lock`` held, which keeps the state as it is read."""
        kept = self._states.get(info.id)
        # Only the events the row counts: one appended since it was read would show a state
        # ahead of the row's counts (a run terminated whose tokens the row does not have).
        end = info.next_seq
        if kept is None or kept[0] > end:  # not read yet (or the run was rewritten)
            events = [event for event in self.store.log(info.id).load() if event.seq < end]
            state, flow = fold(events), self._shown(flow_in_force(events))
        else:
            seq, state, flow = kept
            events = SqlLog(self.store, info).since(seq - 1, limit=end - seq) if seq < end else []
            for event in events:
                apply(state, event)
            if (record := flow_in_force(events)) is not None:
                flow = self._shown(record)
        self._states[info.id] = (state.next_seq, state, flow)
        self._states.move_to_end(info.id)
        while len(self._states) > STATES_KEPT:
            self._states.popitem(last=False)
        return state, flow

    def _shown(self, record: FlowRecord | None) -> Flow | None:
        try:
            return self.flows.shown(record.path, record.text) if record is not None else None
        except RoostError:
            return None

    def cost(self, info: RunInfo) -> float | None:
        """What the run's model calls cost (``reported_cost``); a run without tokens is not
        read, and one read before is read from where it was left."""
        if not info.tokens:
            return None
        with self.lock:
            seq, tally = self._costs.get(info.id, (0, CostTally()))
        if seq > info.next_seq:
            seq, tally = 0, CostTally()  # the run was rewritten: priced afresh
        if seq < info.next_seq:
            events = SqlLog(self.store, info).since(seq - 1)
            tally = tally.extended(events)
            with self.lock:  # by the events read: the run may have moved on since
                self._costs[info.id] = (events[-1].seq + 1 if events else seq, tally)
                self._costs.move_to_end(info.id)
                while len(self._costs) > STATES_KEPT:
                    self._costs.popitem(last=False)
        return tally.reported()

    def flow(self, run_id: str) -> Flow:
        """The flow the run follows now."""
        _, _, flow = self.state(run_id)
        if flow is None:
            raise EventLogError(f"run {run_id}: the flow it follows does not load")
        return flow

    async def events_after(self, run_id: str, after: int, limit: int | None = None) -> list[Event]:
        """The run's events after seq ``after`` (at most ``limit``), read in a thread.

        Only the new rows are read. Streams that catch up on the same run from the same
        point at once (many clients opening one run) share one read.
        """
        key = (run_id, after, limit)
        shared = self._reads.get(key)
        if shared is None:
            shared = asyncio.ensure_future(asyncio.to_thread(self._events_after, *key))
            self._reads[key] = shared
            shared.add_done_callback(lambda _: self._reads.pop(key, None))
        return await asyncio.shield(shared)

    def _events_after(self, run_id: str, after: int, limit: int | None) -> list[Event]:
        info = self.store.run(run_id)
        if info.next_seq <= after + 1:
            return []  # nothing new: the events need not be read
        return SqlLog(self.store, info).since(after, limit)
