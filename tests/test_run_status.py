"""Every reader of a run's status agrees with the fold, at every prefix of its events.

The fold (``roost.runstate``) is the one definition. The store keeps a status
per run in its row, advanced batch by batch; the drawings and the run page
read one from ``roost.visualize.run_summary``. Both must say what the fold
says after any number of events, whatever the events are.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roost.events import (
    ErrorEvent,
    Event,
    FlowEvent,
    FlowRecord,
    InterruptEvent,
    LlmCallEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    SelectEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
    parse_event,
)
from roost.flow import load_flow_text
from roost.runstate import fold, statuses
from roost.store.sql import SqlStore
from roost.store.summary import summarize as store_summary
from roost.visualize.run_summary import summarize as drawn_summary
from tests.fakes.random_runs import drive, scenarios

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

DATA = Path(__file__).parent / "engine" / "data"
FLOW = load_flow_text(
    "roost: 1\nname: any\nagents: {a: {interrupt: ALWAYS}, b: {interrupt: ALWAYS}}\n"
    "start: {from: a, to: b}\n",
    "any.yaml",
)
RECORD = FlowRecord(path="any.yaml", name="any", hash="sha256:0", text="")

# One maker per event type: any of them may come in any order in these tests.
MAKERS: dict[str, Callable[[int], Event]] = {
    "run_start": lambda seq: RunStartEvent(seq=seq, run="r", ts="t", flow=RECORD),
    "flow": lambda seq: FlowEvent(seq=seq, run="r", ts="t", flow=RECORD),
    "message": lambda seq: MessageEvent(seq=seq, run="r", ts="t", from_="a", to="b", content="x"),
    "interrupt": lambda seq: InterruptEvent(seq=seq, run="r", ts="t", from_="b", to="a"),
    "error": lambda seq: ErrorEvent(seq=seq, run="r", ts="t", from_="a", to="b", content="no"),
    "terminate": lambda seq: TerminateEvent(seq=seq, run="r", ts="t", node="b"),
    "resume": lambda seq: ResumeEvent(seq=seq, run="r", ts="t", from_="a", to="b", feedback=""),
    "retry": lambda seq: RetryEvent(seq=seq, run="r", ts="t", from_="a", to="b"),
    "select": lambda seq: SelectEvent(
        seq=seq, run="r", ts="t", channel="c", candidates=("a",), chosen="a", by="random"
    ),
    "tool_call": lambda seq: ToolCallEvent(
        seq=seq, run="r", ts="t", agent="b", id="1", name="t", arguments={}
    ),
    "tool_result": lambda seq: ToolResultEvent(
        seq=seq, run="r", ts="t", agent="b", id="1", name="t", content="ok"
    ),
    "llm_call": lambda seq: LlmCallEvent(
        seq=seq,
        run="r",
        ts="t",
        node="b",
        provider="p",
        model="m",
        request_digest="sha256:0",
        usage={"prompt_tokens": 3, "completion_tokens": 2},
    ),
}


def events_of(types: Sequence[str]) -> list[Event]:
    return [MAKERS[kind](seq) for seq, kind in enumerate(types)]


def assert_readers_agree(events: Sequence[Event], cuts: Sequence[int] = ()) -> None:
    """At every prefix: the fold, the drawing's summary and the store's summary agree.

    The store's summary is also advanced batch by batch, split at ``cuts``, as
    the store does it from the status in the run's row.
    """
    folded = statuses(events)
    for end in range(len(events) + 1):
        prefix = events[:end]
        assert fold(prefix).status == folded[end]
        assert drawn_summary(FLOW, prefix).final.status == folded[end], prefix
        assert (store_summary(prefix).status or "new") == folded[end], prefix
    row: Any = "new"
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(events)}), len(events)]
    for start, stop in itertools.pairwise(bounds):
        row = store_summary(events[start:stop]).status or row
        assert row == folded[stop]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(MAKERS)), max_size=14),
    st.lists(st.integers(0, 14), max_size=5),
)
def test_readers_agree_on_any_events(types: list[str], cuts: list[int]) -> None:
    assert_readers_agree(events_of(types), cuts)


@pytest.mark.parametrize(
    ("types", "status"),
    [
        (["run_start"], "new"),  # a fork made at 1: a run not yet started
        (["run_start", "message", "terminate", "llm_call"], "terminated"),
        (["run_start", "message", "interrupt", "tool_result"], "paused"),
        (["run_start", "message", "error", "flow"], "error"),
        (["run_start", "message", "llm_call", "tool_call"], "running"),
    ],
)
def test_what_the_readers_used_to_disagree_on(types: list[str], status: str) -> None:
    events = events_of(types)
    assert fold(events).status == status
    assert_readers_agree(events, cuts=range(len(events)))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_readers_agree_on_real_runs(s: dict[str, Any]) -> None:
    events, _ = asyncio.run(drive(s))
    steps = [e.seq for before, e in itertools.pairwise(events) if e.ts != before.ts]
    assert_readers_agree(events, steps)


def stored_statuses(events: Sequence[Event], db: Path) -> list[str]:
    """The status in the run's row of a SQLite store after each event, appended one by one."""
    store = SqlStore(f"sqlite:///{db}")
    try:
        log = store.new_log(events[0].run)
        found = []
        for event in events:
            log.append([event])  # each event its own batch: every prefix is stored once
            found.append(store.run(log.run_id).status)
        return found
    finally:
        store.close()


@pytest.mark.parametrize("name", ["fallback_run.jsonl", "channel_run.jsonl"])
def test_the_stored_status_is_the_folds_after_every_event(name: str, tmp_path: Path) -> None:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    events = [parse_event(line) for line in lines]
    assert stored_statuses(events, tmp_path / "runs.db") == statuses(events)[1:]


@pytest.mark.parametrize(
    "types",
    [
        ["run_start", "message", "terminate", "llm_call", "flow"],
        ["run_start", "message", "interrupt", "tool_result", "resume", "llm_call"],
        ["run_start", "message", "error", "llm_call", "retry", "tool_call"],
    ],
)
def test_the_stored_status_stays_where_the_fold_leaves_it(types: list[str], tmp_path: Path) -> None:
    events = events_of(types)
    assert stored_statuses(events, tmp_path / "runs.db") == statuses(events)[1:]
