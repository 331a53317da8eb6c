"""Span records' ids: made from the run, so the same run gives the same ids and others never."""

from __future__ import annotations

import roost
from roost.telemetry.spans import spans_of
from roost.testing import flow_from_yaml
from tests.telemetry.conftest import TOOL_FLOW, TOOL_REPLIES


def test_ids_come_from_the_run_so_two_runs_never_share_a_trace() -> None:
    flow = flow_from_yaml(TOOL_FLOW, replies=TOOL_REPLIES)
    one = spans_of(roost_events(flow, "run-a"))
    again = spans_of(roost_events(flow, "run-a"))
    other = spans_of(roost_events(flow, "run-b"))
    assert [(s.trace_id, s.span_id) for s in one] == [(s.trace_id, s.span_id) for s in again]
    assert {s.trace_id for s in one}.isdisjoint({s.trace_id for s in other})
    assert len({s.span_id for s in one}) == len(one)


def roost_events(flow: roost.Flow, run_id: str) -> list[roost.Event]:
    log = roost.MemoryLog(run_id)
    state = roost.run_sync(flow, log=log, answer=lambda state: "yes")
    assert state.status == "terminated"
    return log.load()
