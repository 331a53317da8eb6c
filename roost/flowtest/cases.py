"""Running one case of a test file, and judging what came of it.

A case runs its flow in memory, as ``roost.run`` does: the scripted replies
answer for the providers the case names, ``answers`` answer the interrupts in
order, and when they run out the run stays paused. Each expectation compares
one thing of the finished run (its status, the node it ended at, its last
message, its tool calls, its directors' choices, its latest structured reply,
the routes it took) and, when it differs, says
what was expected and what happened. A replay case re-executes a recorded run
under the flow as it is now: an edit that changes what the agents do shows as
the first event that differs, with a diff of the events around it.
"""

from __future__ import annotations

import difflib
import json
import re
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roost.api import memory_bank
from roost.engine.sources import Sources
from roost.errors import RoostError
from roost.events import (
    OUTSIDE_CALLS,
    ErrorEvent,
    Event,
    InterruptEvent,
    LlmCallEvent,
    MessageEvent,
    SelectEvent,
    TerminateEvent,
    ToolCallEvent,
)
from roost.flow.routes import ARROW, route_name, taken_routes
from roost.flowtest.judging import Verdict, verdict_of
from roost.flowtest.person import simulated_reply
from roost.ports import MemoryLog, new_run_id
from roost.pricing import run_cost
from roost.providers.keys import unreachable
from roost.runview import pause_of, view_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from roost.engine import Runner
    from roost.flowtest.spec import Expect, LoadedCase, TestFile, ToolCalled
    from roost.ports import EventLog, MemoryBank
    from roost.runview import RunView
    from roost.store.sql import SqlStore

DIFF_CONTEXT = 3  # events shown before and after the ones that differ
SHOWN_LINE = 400  # characters of one event or message shown in a report


@dataclass(frozen=True, slots=True)
class Attempt:
    """One run of a case: its stored run's id, what failed, what backs it up, the verdicts."""

    run_id: str
    failures: list[str]
    details: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the judges' verdicts, passed or not
    stored: bool = True  # a run was made (a case stopped before it makes none)

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True, slots=True)
class CaseResult:
    """How one case went: ``failures`` empty when it passed; ``details`` back them up.

    ``attempts`` are its runs (one unless repeated), ``needed`` how many had to pass.
    """

    file: TestFile
    case: LoadedCase
    failures: list[str]
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    attempts: list[Attempt] = field(default_factory=list)
    needed: int = 1
    stored: bool = False  # its runs are kept in a store (else in memory only)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def name(self) -> str:
        return self.case.case.name

    @property
    def node_id(self) -> str:
        return f"{self.file.path}::{self.name}"

    @property
    def tally(self) -> str | None:
        """``3/5 passed`` for a case run several times, else None."""
        if len(self.attempts) < 2:
            return None
        return f"{sum(a.passed for a in self.attempts)}/{len(self.attempts)} passed"

    @property
    def notes(self) -> list[str]:
        """The verdicts of every run's judges, each run named when there are several."""
        if len(self.attempts) < 2:
            return [n for a in self.attempts for n in a.notes]
        return [f"run {i}: {n}" for i, a in enumerate(self.attempts, 1) for n in a.notes]


async def run_case(
    file: TestFile,
    case: LoadedCase,
    *,
    store: SqlStore | None = None,
    repeat: int | None = None,
) -> CaseResult:
    """Runs ``case`` (``repeat`` times, else as often as it says) and judges it.

    Each run is kept in ``store`` (else in memory); never raises for what a run does.
    """
    began = time.perf_counter()
    if case.replay is not None:
        failures, details = await _replayed(case)
        return CaseResult(file, case, failures, details, time.perf_counter() - began)
    runs, needed = case.times(repeat)
    attempts = []
    keyless = unreachable(case.flow)  # the case's scripted replies already replace theirs
    for number in range(1, runs + 1):
        if keyless is not None:  # no run is made: its first call could not be answered
            attempts.append(Attempt("", [keyless.advice()], stored=False))
            continue
        log = _case_log(file, case, store, number if runs > 1 else None)
        attempts.append(await _attempt(case, log))
    failures, details = _overall(attempts, needed)
    seconds = time.perf_counter() - began
    stored = store is not None and any(attempt.stored for attempt in attempts)
    return CaseResult(file, case, failures, details, seconds, attempts, needed, stored)


def _case_log(
    file: TestFile, case: LoadedCase, store: SqlStore | None, number: int | None
) -> EventLog:
    """A new log for one run of ``case``: stored (titled by the case) or in memory."""
    if store is None:
        return MemoryLog(f"test-{case.index + 1}" + (f"-{number}" if number else ""))
    title = f"test {file.path.name}::{case.case.name}" + (f" (run {number})" if number else "")
    return store.new_log(new_run_id(), title=title)


def _overall(attempts: list[Attempt], needed: int) -> tuple[list[str], list[str]]:
    """A single run's failures, or a tally below ``needed`` and each failed run's."""
    if len(attempts) == 1:
        return attempts[0].failures, attempts[0].details
    passed = sum(attempt.passed for attempt in attempts)
    if passed >= needed:
        return [], []
    failures = [f"{passed}/{len(attempts)} passed, pass_at is {needed}"]
    for number, attempt in enumerate(attempts, 1):
        failures += [f"run {number} ({attempt.run_id}): {line}" for line in attempt.failures]
    first = next(attempt for attempt in attempts if not attempt.passed)
    return failures, first.details


async def _attempt(loaded: LoadedCase, log: EventLog) -> Attempt:
    from roost.engine import Runner
    from roost.flowtest.outside import OutsideCallFailed

    case = loaded.case
    assert case.expect is not None
    verdicts: list[Verdict] = []
    try:
        with scratch_memory() as memory:
            runner = Runner(flow=loaded.flow, log=log, sources=Sources(memory=memory))
            await runner.start(case.message)
            await _answer_pauses(runner, loaded)
            said = transcript(own_events(log.load()))
            for one in case.expect.judges():
                verdicts.append(await verdict_of(runner, loaded.outside, one, said))
    except OutsideCallFailed as error:
        return Attempt(log.run_id, [f"{error}"], transcript(log.load()))
    except RoostError as error:
        return Attempt(log.run_id, [f"the run failed: {error}"], transcript(log.load()))
    events = log.load()
    own = own_events(events)
    state = view_of(runner.state, run_cost(own))
    failures = judge(case.expect, state, own)
    failures += [verdict.line() for verdict in verdicts if not verdict.passed]
    notes = [verdict.line() for verdict in verdicts]
    return Attempt(log.run_id, failures, transcript(events) if failures else [], notes)


async def _answer_pauses(runner: Runner, loaded: LoadedCase) -> None:
    """Answers the run's pauses: the simulated person a person's, ``approvals`` (when given)
    the tool approvals, ``answers`` the rest, in order; stops when none answers."""
    case = loaded.case
    answers, approvals = iter(case.answers), iter(case.approvals)
    turns = 0
    while (pause := pause_of(view_of(runner.state))) is not None:
        said: str | None
        if pause.kind == "tool_approval" and case.approvals:
            said = next(approvals, None)
        elif pause.kind == "person" and case.user is not None:
            if turns >= case.user.max_turns:
                return
            turns += 1
            said = await simulated_reply(runner, loaded.outside, case.user, pause.node)
        else:
            said = next(answers, None)
        if said is None:
            return
        await runner.continue_(said)


def own_events(events: list[Event]) -> list[Event]:
    """The run's events without the calls a test made outside the flow (judge, person)."""
    return [e for e in events if not (isinstance(e, LlmCallEvent) and e.purpose in OUTSIDE_CALLS)]


@contextmanager
def scratch_memory() -> Iterator[MemoryBank]:
    """An empty memory for one case, thrown away after it: a case neither reads nor
    changes the memory of the project's store, and no case sees another's."""
    with tempfile.TemporaryDirectory(prefix="roost-test-") as folder:
        bank = memory_bank(str(Path(folder) / "memory.db"))
        try:
            yield bank
        finally:
            bank.close()


def judge(expect: Expect, state: RunView, events: list[Event]) -> list[str]:
    """What of ``expect`` the run did not do, each as one line of expected and got."""
    failures = []
    for check in _CHECKS:
        failure = check(expect, state, events)
        if failure is not None:
            failures.append(failure)
    return failures


def _status(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    if expect.status is None or expect.status == state.status:
        return None
    why = f" ({state.pending.content})" if isinstance(state.pending, ErrorEvent) else ""
    return f"status: expected {expect.status}, got {state.status}{why}"


def _at(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    if expect.at is None:
        return None
    node = ended_at(state, events)
    if node == expect.at:
        return None
    got = f"it {state.status} at {node}" if node else f"it is {state.status}"
    return f"at: expected the run to stop at {expect.at}, {got}"


def ended_at(state: RunView, events: list[Event]) -> str | None:
    """The node a run came to rest at: where it terminated, who it waits for, who failed."""
    last = events[-1] if events else None
    if isinstance(last, TerminateEvent):
        return last.node
    if isinstance(state.pending, InterruptEvent | ErrorEvent):
        return state.pending.from_
    return None


def _final(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    final = expect.final
    if final is None:
        return None
    got = state.answer
    shown = _quoted(got) if got is not None else "no answer"
    if final.equals is not None and got != final.equals:
        return f"final: expected {_quoted(final.equals)}, got {shown}"
    if final.contains is not None and (got is None or final.contains not in got):
        return f"final: expected it to contain {_quoted(final.contains)}, got {shown}"
    if final.matches is not None and (got is None or re.search(final.matches, got) is None):
        return f"final: expected it to match /{final.matches}/, got {shown}"
    return None


def _tool_called(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    wanted = expect.tool_called
    if wanted is None:
        return None
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    for one in wanted if isinstance(wanted, list) else [wanted]:
        if not any(_is_call_of(call, one) for call in calls):
            made = "; ".join(f"{c.name} {_json(c.arguments)}" for c in calls) or "none"
            expected = f"a call of {one.name} with {_json(one.arguments)}"
            return f"tool_called: expected {expected}; calls made: {made}"
    return None


def _is_call_of(call: ToolCallEvent, wanted: ToolCalled) -> bool:
    """The call is of the tool (by its flow or its wire name) and has those arguments."""
    from roost.tools.names import wire_name

    if call.name not in (wanted.name, wire_name(wanted.name)):
        return False
    return all(key in call.arguments and call.arguments[key] == value
               for key, value in wanted.arguments.items())  # fmt: skip


def _chosen(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    if expect.chosen is None:
        return None
    chosen = [e.chosen for e in events if isinstance(e, SelectEvent)]
    if chosen == expect.chosen:
        return None
    return f"chosen: expected {_json(expect.chosen)}, got {_json(chosen)}"


def _tools_in_order(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    wanted = expect.tools_in_order
    if wanted is None:
        return None
    from roost.tools.names import wire_name

    calls = [e.name for e in events if isinstance(e, ToolCallEvent)]
    made = iter(calls)  # each wanted name is looked for after the one before it
    if all(any(name in (one, wire_name(one)) for name in made) for one in wanted):
        return None
    return (
        f"tools_in_order: expected calls of {', '.join(wanted)} in this order; "
        f"calls made: {', '.join(calls) or 'none'}"
    )


def _limits(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    calls = [e for e in events if isinstance(e, LlmCallEvent)]
    tokens = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in calls if c.usage)
    over = []
    if expect.max_model_calls is not None and len(calls) > expect.max_model_calls:
        over.append(
            f"max_model_calls: expected at most {expect.max_model_calls}, made {len(calls)}"
        )
    if expect.max_tokens is not None and tokens > expect.max_tokens:
        over.append(f"max_tokens: expected at most {expect.max_tokens}, used {tokens}")
    if expect.max_cost is not None:
        cost = state.cost
        if cost.amount > expect.max_cost:
            shown = f"${cost.amount:g}" + (" (estimated)" if cost.estimated else "")
            over.append(f"max_cost: expected at most ${expect.max_cost:g}, spent {shown}")
        elif cost.unpriced:
            over.append(f"max_cost: cannot tell, {cost.text()}")
    return "; ".join(over) or None


def _data(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    if expect.data is None:
        return None
    data = next(
        (e.data for e in reversed(events) if isinstance(e, MessageEvent) and e.data is not None),
        None,
    )
    if data is not None and has_subset(data, expect.data):
        return None
    got = _clip(_json(data)) if data is not None else "no structured reply"
    return f"data: expected the latest structured reply to have {_json(expect.data)}, got {got}"


def has_subset(data: Any, wanted: Any) -> bool:
    """``data`` has every key of ``wanted`` with the same value (nested mappings alike)."""
    if isinstance(wanted, dict):
        return isinstance(data, dict) and all(
            key in data and has_subset(data[key], value) for key, value in wanted.items()
        )
    return bool(data == wanted)


def _route(expect: Expect, state: RunView, events: list[Event]) -> str | None:
    if expect.route is None:
        return None
    wanted = [ARROW.join(named) for text in expect.route if (named := route_name(text))]
    taken = [route.name for route in taken_routes(events)]
    if taken == wanted:
        return None
    return f"route: expected [{', '.join(wanted)}], got [{', '.join(taken)}]"


_CHECKS: list[Callable[[Expect, RunView, list[Event]], str | None]] = [
    _status, _at, _final, _tool_called, _chosen, _tools_in_order, _limits, _data, _route,
]  # fmt: skip


async def _replayed(loaded: LoadedCase) -> tuple[list[str], list[str]]:
    from roost.engine.replay import replay_run
    from roost.store.jsonl import JsonlLog

    assert loaded.replay is not None
    if not loaded.replay.is_file():
        return [f"replay: no recorded run {loaded.case.replay!r} next to the test file"], []
    log = JsonlLog(loaded.replay)
    try:
        recorded = log.load()
        report = await replay_run(loaded.flow, recorded)
    except RoostError as error:
        return [f"replay: cannot replay {loaded.case.replay}: {error}"], []
    finally:
        log.close()
    if report.identical:
        return [], []
    assert report.difference is not None
    failure = (
        f"replay: expected identical, diverged at event {report.difference.index} "
        f"(of {report.compared} recorded)"
    )
    if report.stopped:
        failure += f"; the replay stopped: {report.stopped}"
    return [failure], event_diff(recorded, report.events)


def event_diff(recorded: list[Event], replayed: list[Event]) -> list[str]:
    """A unified diff of the two runs' events (without run ids and times), a line a field."""
    from roost.engine.replay import comparable

    def lines(events: list[Event]) -> list[str]:
        shown = []
        for event in events:
            fields = comparable(event)
            seq, kind = fields.pop("seq", "?"), fields.pop("type", "?")
            shown.append(f"[{seq}] {kind}")
            shown += [
                f"[{seq}] {kind}.{key}: {_clip(_json(value))}"
                for key, value in sorted(fields.items())
            ]
        return shown

    return list(
        difflib.unified_diff(
            lines(recorded), lines(replayed), "recorded", "replayed", n=DIFF_CONTEXT, lineterm=""
        )
    )


def transcript(events: list[Event]) -> list[str]:
    """What happened in a run, a line an entry of its history (and how it ended)."""
    shown = []
    for event in events:
        if isinstance(event, MessageEvent | ErrorEvent):
            state = " (error)" if isinstance(event, ErrorEvent) else ""
            shown.append(f"{event.from_} -> {event.to}{state}: {_clip(event.content)}")
        elif isinstance(event, InterruptEvent):
            shown.append(f"(paused: {event.from_} is asked)")
        elif isinstance(event, ToolCallEvent):
            shown.append(f"  {event.agent} calls {event.name} {_clip(_json(event.arguments))}")
        elif isinstance(event, TerminateEvent):
            shown.append(f"(terminated at {event.node})")
    return shown


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _quoted(text: str) -> str:
    return _clip(json.dumps(text, ensure_ascii=False))


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_LINE else text[: SHOWN_LINE - 1] + "…"
