"""A budget's decisions in the OpenTelemetry spans of a run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.ports import MemoryLog
from roost.telemetry.spans import spans_of
from tests.budgets.conftest import looping_flow

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer


async def test_the_run_span_carries_the_budgets_decision(server: FakeLLMServer) -> None:
    log = MemoryLog("run")
    await Runner(flow=looping_flow(server, "{model_calls: 3}"), log=log).start()
    spans = spans_of(log.load())
    (run,) = [s for s in spans if s.name.startswith("invoke_workflow")]
    assert run.attributes["roost.budget.action"] == "stop"
    assert run.attributes["roost.budget.limit"] == "model_calls"
    assert run.attributes["roost.budget.spent"] == 3.0
    assert run.attributes["roost.budget.allowed"] == 3.0
    (note,) = [n for n in run.notes if n.name == "roost.budget"]
    assert note.attributes["roost.budget.node"] in ("a", "b", "room")
