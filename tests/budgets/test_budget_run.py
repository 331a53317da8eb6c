"""Budgets kept before the money is spent, on a fake model that reports its usage.

The costs are real arithmetic: the tokens the fake server reports times the
price the flow gives. A call that would pass a limit is never sent: the fake
server's count of requests says so.
"""

from __future__ import annotations

import asyncio
import itertools
import textwrap
from typing import TYPE_CHECKING

import pytest
from fakes.runners import runner_options

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.errors import UsageError
from roost.events import BudgetEvent, Event, InterruptEvent, LlmCallEvent, TerminateEvent
from roost.flow import load_flow_text
from roost.loading import load_flow
from roost.ports import MemoryLog
from roost.pricing import run_cost
from roost.runstate import fold
from tests.budgets.conftest import looping_flow
from tests.fakes.tools import FakeTool

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from fakes.llm_server import FakeLLMServer

    from roost.flow.models import Flow


async def run(flow: Flow, log: MemoryLog | None = None, **options: object) -> list[Event]:
    log = log or MemoryLog("run")
    await Runner(flow=flow, log=log, **runner_options(options)).start()
    return log.load()


def budget_events(events: list[Event]) -> list[BudgetEvent]:
    return [e for e in events if isinstance(e, BudgetEvent)]


def calls(events: list[Event]) -> list[LlmCallEvent]:
    return [e for e in events if isinstance(e, LlmCallEvent)]


def ending(events: list[Event]) -> TerminateEvent:
    last = events[-1]
    assert isinstance(last, TerminateEvent)
    return last


async def test_a_looping_director_stops_at_its_cost_limit_without_the_refused_call(
    server: FakeLLMServer,
) -> None:
    events = await run(looping_flow(server, "{cost: 0.5}"))
    spent = run_cost(events)
    assert not spent.estimated and spent.unpriced == 0
    assert 0.3 < spent.amount <= 0.5  # it ran a while, and never passed the limit
    assert ending(events).reason == "budget"
    (decision,) = budget_events(events)
    assert (decision.limit, decision.action, decision.agent) == ("cost", "stop", None)
    assert decision.spent == pytest.approx(spent.amount)
    assert decision.estimate is not None and decision.spent + decision.estimate > 0.5
    # The refused call was never sent: every request the server saw is a recorded call.
    assert len(server.requests) == len(calls(events))
    assert any(c.node == "room" for c in calls(events))  # the director's calls counted
    assert fold(events).spent_by(None).cost == pytest.approx(spent.amount)


async def test_a_token_limit_counts_reported_tokens(server: FakeLLMServer) -> None:
    events = await run(looping_flow(server, "{tokens: 400}"))
    used = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in calls(events) if c.usage)
    (decision,) = budget_events(events)
    assert decision.limit == "tokens" and decision.spent == used <= 400
    assert decision.estimate is not None and used + decision.estimate > 400
    assert ending(events).reason == "budget"


async def test_a_model_call_limit_makes_exactly_that_many_calls(server: FakeLLMServer) -> None:
    events = await run(looping_flow(server, "{model_calls: 5}"))
    assert len(calls(events)) == 5 == len(server.requests)
    assert budget_events(events)[0].limit == "model_calls"


async def test_an_agents_budget_is_kept_beside_the_flows(server: FakeLLMServer) -> None:
    events = await run(looping_flow(server, "{model_calls: 50}", agent="{model_calls: 2}"))
    (decision,) = budget_events(events)
    assert (decision.agent, decision.node, decision.limit) == ("a", "a", "model_calls")
    assert sum(1 for c in calls(events) if c.node == "a") == 2
    assert len(calls(events)) < 50


async def test_ask_pauses_and_a_new_limit_goes_on(server: FakeLLMServer) -> None:
    flow = looping_flow(server, "{model_calls: 3, on_exhausted: ask}")
    log = MemoryLog("run")
    runner = Runner(flow=flow, log=log)
    state = await runner.start()
    pending = state.pending
    assert isinstance(pending, InterruptEvent) and pending.reason == "budget"
    assert pending.from_ == "budget"
    assert len(server.requests) == 3
    with pytest.raises(UsageError, match="positive number"):
        await runner.continue_("lots")
    with pytest.raises(UsageError, match="not above"):
        await runner.continue_("2")
    state = await runner.continue_("5")
    assert state.status == "paused" and len(server.requests) == 5
    raised = [e for e in budget_events(log.load()) if e.action == "raised"]
    assert [(e.limit, e.allowed) for e in raised] == [("model_calls", 5.0)]
    state = await runner.continue_("no")
    assert state.status == "terminated" and ending(log.load()).reason == "budget"
    assert len(server.requests) == 5
    assert (await replay_run(None, log.load())).identical


async def test_switch_to_finishes_on_the_cheaper_provider(server: FakeLLMServer) -> None:
    events = await run(looping_flow(server, "{cost: 0.3, on_exhausted: {switch_to: cheap}}"))
    decisions = budget_events(events)
    assert [(d.action, d.provider) for d in decisions] == [("switch_to", "cheap"), ("stop", None)]
    switch = decisions[0]
    before = [c for c in calls(events) if c.seq < switch.seq]
    after = [c for c in calls(events) if c.seq > switch.seq]
    assert {c.provider for c in before} == {"llm"} and {c.provider for c in after} == {"cheap"}
    assert len(after) > 10  # the cheap model goes on a good while
    assert run_cost(events).amount <= 0.3
    assert (await replay_run(None, events)).identical


@pytest.mark.parametrize(
    "budget",
    [
        "{cost: 0.5}",
        "{tokens: 400}",
        "{model_calls: 4}",
        "{cost: 0.3, on_exhausted: {switch_to: cheap}}",
    ],
)
async def test_every_decision_replays_identical(server: FakeLLMServer, budget: str) -> None:
    events = await run(looping_flow(server, budget))
    asked = len(server.requests)
    report = await replay_run(None, events)
    assert report.identical, report.difference
    assert len(server.requests) == asked  # no model was called


async def test_a_replay_under_another_budget_diverges_where_the_decision_changes(
    server: FakeLLMServer,
) -> None:
    events = await run(looping_flow(server, "{model_calls: 4}"))
    tighter = looping_flow(server, "{model_calls: 3}")
    report = await replay_run(tighter, events)
    assert report.difference is not None
    assert isinstance(report.difference.replayed, BudgetEvent)
    assert isinstance(report.difference.recorded, LlmCallEvent)  # where the 4th call was made


async def test_a_fork_inherits_what_the_shared_part_spent(server: FakeLLMServer) -> None:
    events = await run(looping_flow(server, "{model_calls: 6}"))
    third = [c for c in calls(events)][2]
    shared = [e for e in events if e.seq <= third.seq + 1]  # the third call and its message
    fork = MemoryLog("fork")
    fork.append([e.model_copy(update={"run": "fork"}) for e in shared])
    before = len(server.requests)
    state = await Runner(flow=looping_flow(server, "{model_calls: 6}"), log=fork).retry()
    assert state.status == "terminated"
    assert len(server.requests) - before == 3  # six in all, three of them shared


TOOLS_FLOW = """\
roost: 1
defaults: {provider: mock, max_tool_calls: 50}
providers:
  mock: {kind: scripted, replies: [{tool_calls: [{name: note}, {name: note}]}],
         when_exhausted: repeat_last}
budget: {budget}
tools: {note: {python: "notes:note"}}
agents:
  a: {role: You note., functions: [note]}
  b: {role: You ask.}
start: {from: b, to: a, content: go}
"""


def tools_flow(budget: str) -> Flow:
    return load_flow_text(textwrap.dedent(TOOLS_FLOW.replace("{budget}", budget)), "flow.yaml")


async def test_a_tool_call_limit_is_checked_before_each_round() -> None:
    tool = FakeTool("note", "noted")
    events = await run(tools_flow("{tool_calls: 5}"), tools=lambda agent, text: [tool])
    assert len(tool.calls) == 4  # two rounds of two; a third would pass five
    (decision,) = budget_events(events)
    assert (decision.limit, decision.spent, decision.estimate) == ("tool_calls", 4.0, 2.0)
    assert ending(events).reason == "budget"
    assert (await replay_run(None, events)).identical


def ticking() -> Callable[[], str]:
    """A clock that moves a second at each reading."""
    seconds = itertools.count()
    return lambda: f"2026-01-01T00:{(s := next(seconds)) // 60:02d}:{s % 60:02d}.000000Z"


async def test_a_seconds_limit_stops_the_run_when_its_time_is_used() -> None:
    tool = FakeTool("note", "noted")
    events = await run(
        tools_flow("{seconds: 4}"), tools=lambda agent, text: [tool], clock=ticking()
    )
    (decision,) = budget_events(events)
    assert decision.limit == "seconds" and decision.spent >= 4
    assert ending(events).reason == "budget"
    assert (await replay_run(None, events)).identical


def test_the_time_a_run_sat_paused_is_not_its_own() -> None:
    text = tools_flow("{seconds: 60}").text
    stamps = ["00:00:00", "00:00:01", "00:00:03", "05:00:00", "05:00:02", "05:00:04"]
    rows = [
        {"type": "run_start", "flow": {"path": "f", "name": "f", "hash": "h", "text": text}},
        {"type": "message", "from": "b", "to": "a", "content": "go"},
        {"type": "interrupt", "from": "a", "to": "b"},
        {"type": "resume", "from": "a", "to": "b", "feedback": "on"},
        {"type": "message", "from": "b", "to": "a", "content": "on"},
        {"type": "terminate", "node": "a"},
    ]
    from roost.events import parse_event

    events = [
        parse_event({**row, "seq": n, "run": "r", "ts": f"2026-01-01T{stamps[n]}.000000Z"})
        for n, row in enumerate(rows)
    ]
    assert fold(events).seconds == 3 + 4  # the five hours paused are left out


async def test_a_flow_without_a_budget_records_nothing_of_one(server: FakeLLMServer) -> None:
    flow = looping_flow(server, "{model_calls: 3}")
    plain = load_flow_text(flow.text.replace("budget: {model_calls: 3}\n", ""), "flow.yaml")
    assert plain.budget is None
    log = MemoryLog("run")
    runner = Runner(flow=plain, log=log)
    assert runner._interpreter.budget is None  # no keeper: nothing estimated per call
    server.responder = None
    server.script(*[])
    await asyncio.wait_for(runner.start(), 30)
    assert not budget_events(log.load())


def subflow_files(server: FakeLLMServer, folder: Path, budget: str) -> Flow:
    """A parent whose scripted agent asks a priced sub-flow again and again."""
    from tests.budgets.conftest import provider

    child = f"""\
roost: 1
providers: {{llm: {provider(server)}}}
agents:
  helper: {{role: You are a.}}
  asker: {{role: You are b., provider: llm}}
start: {{from: asker, to: helper}}
"""
    (folder / "child.yaml").write_text(
        child.replace("helper: {role: You are a.}", "helper: {role: You are a., provider: llm}")
    )
    parent = f"""\
roost: 1
defaults: {{provider: mock, max_tool_calls: 30, max_rounds: 2}}
providers:
  mock: {{kind: scripted, replies: [{{tool_calls: [{{name: helper, arguments: {{message: go}}}}]}}],
         when_exhausted: repeat_last}}
budget: {budget}
tools: {{helper: {{flow: child.yaml}}}}
agents:
  boss: {{role: You delegate., functions: [helper]}}
  user: {{role: You ask.}}
start: {{from: user, to: boss, content: go}}
"""
    path = folder / "parent.yaml"
    path.write_text(parent)
    return load_flow(path)


async def test_a_subflows_spending_counts_toward_its_parents_budget(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    children: dict[str, MemoryLog] = {}

    def child_log(run_id: str) -> MemoryLog:
        children[run_id] = MemoryLog(run_id)
        return children[run_id]

    flow = subflow_files(server, tmp_path, "{cost: 0.3}")
    events = await run(flow, child_log=child_log)
    state = fold(events)
    spent_by_children = sum(run_cost(log.load()).amount for log in children.values())
    assert state.subflows.cost == pytest.approx(spent_by_children)
    assert state.spent_by(None).cost <= 0.3 < state.subflows.cost + 0.2  # up to the limit
    stopped = [log for log in children.values() if budget_events(log.load())]
    assert stopped  # a child run was refused the call that would pass the parent's limit
    assert len(server.requests) == sum(len(calls(log.load())) for log in children.values())
    assert (await replay_run(None, events)).identical


async def test_a_fallbacks_calls_count(server: FakeLLMServer) -> None:
    from tests.budgets.conftest import provider

    text = f"""\
roost: 1
defaults: {{provider: flaky, max_rounds: 100}}
providers:
  flaky: {{kind: scripted, replies: [{{error: down}}], when_exhausted: repeat_last,
          fallback: [llm]}}
  llm: {provider(server)}
budget: {{model_calls: 4}}
agents:
  a: {{role: You are a.}}
  b: {{role: You are b.}}
start: {{from: a, to: b, content: Talk.}}
"""
    events = await run(load_flow_text(text, "flow.yaml"))
    made = calls(events)
    assert [len(c.attempts) for c in made] == [2, 2]  # each attempt counted: four
    assert len(server.requests) == 2
    (decision,) = budget_events(events)
    assert (decision.limit, decision.spent) == ("model_calls", 4.0)


async def test_a_summarys_calls_count(server: FakeLLMServer) -> None:
    flow = looping_flow(server, "{model_calls: 30}")
    small = flow.text.replace(
        "price: {input: 1000, output: 2000}}",
        "price: {input: 1000, output: 2000}, context_window: 150}",
        1,
    )
    events = await run(load_flow_text(small, "flow.yaml"))
    made = calls(events)
    assert any(c.purpose == "summary" for c in made)  # compaction asked for summaries
    assert len(made) == 30 == len(server.requests)
    assert ending(events).reason == "budget"
    assert (await replay_run(None, events)).identical


async def test_a_calls_answer_is_estimated_at_its_max_tokens(server: FakeLLMServer) -> None:
    flow = looping_flow(server, "{tokens: 900}")
    # A model that may answer with 1000 tokens: not even the first call fits 900.
    roomy = load_flow_text(flow.text.replace("max_tokens: 8", "max_tokens: 1000"), "flow.yaml")
    events = await run(roomy)
    assert calls(events) == [] and server.requests == []
    (decision,) = budget_events(events)
    assert decision.estimate is not None and 1000 < decision.estimate < 1100
