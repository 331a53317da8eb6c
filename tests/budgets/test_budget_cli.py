"""Budgets from outside: ``roost run --budget``, ``roost continue --budget``, ``roost.run``;
and seen: the line a run prints, ``roost show``'s limits, ``roost runs``' column."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import roost
from roost.events import BudgetEvent, LlmCallEvent, parse_event
from roost.ports import MemoryLog
from roost.pricing import run_cost
from tests.budgets.conftest import looping_flow
from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from fakes.llm_server import FakeLLMServer


def write(server: FakeLLMServer, folder: Path, budget: str = "{}") -> Path:
    path = folder / "loop.yaml"
    path.write_text(looping_flow(server, budget).text)
    return path


def env(folder: Path) -> dict[str, str]:
    return {"ROOST_DB": str(folder / "runs.db")}


def events_of(path: Path) -> list:
    return [parse_event(json.loads(line)) for line in path.read_text().splitlines()]


def test_run_budget_stops_a_looping_flow_at_its_cost(server: FakeLLMServer, tmp_path: Path):
    flow = write(server, tmp_path)
    ran = run_cli("run", str(flow), "--budget", "0.4", "--events", "e.jsonl", "--no-input",
                  cwd=tmp_path, env=env(tmp_path))  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "budget: $0.3" in ran.stdout and "the run stops" in ran.stdout
    events = events_of(tmp_path / "e.jsonl")
    assert 0.3 < run_cost(events).amount <= 0.4
    raised = [e for e in events if isinstance(e, BudgetEvent) and e.action == "raised"]
    assert [(e.limit, e.allowed, e.seq) for e in raised] == [("cost", 0.4, 1)]
    assert len(server.requests) == sum(isinstance(e, LlmCallEvent) for e in events)
    run_id = events[0].run
    shown = run_cli("show", run_id, cwd=tmp_path, env=env(tmp_path))
    assert "budget: cost $0.3" in shown.stdout and "of $0.40 spent" in shown.stdout
    assert "stopped the run" in shown.stdout
    listed = run_cli("runs", cwd=tmp_path, env=env(tmp_path))
    assert "budget" in listed.stdout.splitlines()[0] and "stop cost" in listed.stdout
    replayed = run_cli("replay", run_id, cwd=tmp_path, env=env(tmp_path))
    assert replayed.returncode == 0 and "identical" in replayed.stdout
    from roost.cli.markdown import transcript_markdown

    assert "*budget: $0.3" in transcript_markdown(events) and "the run stops.*" in (
        transcript_markdown(events)
    )


def test_a_budget_on_a_flow_without_prices_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(
        "roost: 1\nproviders:\n  p: {kind: openai, model: no-such-model, base_url: 'http://x'}\n"
        "defaults: {provider: p}\nagents: {a: {}, b: {}}\nstart: {from: a, to: b}\n"
    )
    ran = run_cli("run", "f.yaml", "--budget", "1", cwd=tmp_path, env=env(tmp_path))
    assert ran.returncode == 2
    (line,) = ran.stderr.strip().splitlines()
    assert "'p'" in line and "price" in line and "Traceback" not in ran.stderr


def test_continue_budget_answers_a_budget_that_asks(server: FakeLLMServer, tmp_path: Path):
    flow = write(server, tmp_path, "{cost: 0.2, on_exhausted: ask}")
    first = run_cli("run", str(flow), "--events", "e.jsonl", "--no-input",
                    cwd=tmp_path, env=env(tmp_path))  # fmt: skip
    assert "it asks for a new limit" in first.stdout
    before = len(server.requests)
    again = run_cli("continue", "e.jsonl", "--budget", "0.4", "--no-input",
                    cwd=tmp_path, env=env(tmp_path))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "the cost limit is now $0.40" in again.stdout
    events = events_of(tmp_path / "e.jsonl")
    assert len(server.requests) > before and run_cost(events).amount <= 0.4
    assert [e.action for e in events if isinstance(e, BudgetEvent)] == ["ask", "raised", "ask"]


async def test_roost_run_takes_a_budget_and_raise_budget_answers(server: FakeLLMServer):
    flow = looping_flow(server, "{model_calls: 2, on_exhausted: ask}")
    kinds = []

    def answer(pause: roost.Pause) -> object:
        kinds.append(pause.kind)
        return pause.raise_budget(4) if len(kinds) == 1 else pause.stop()

    log = MemoryLog("api")
    view = await roost.run(flow, answer=answer, log=log, budget=5.0)
    assert kinds == ["budget", "budget"] and view.status == "terminated"
    assert sum(isinstance(e, LlmCallEvent) for e in log.load()) == 4
    limits = {(e.limit, e.allowed) for e in log.load() if isinstance(e, BudgetEvent)}
    assert ("cost", 5.0) in limits and ("model_calls", 4.0) in limits


def test_continue_budget_sets_a_limit_that_replays(server: FakeLLMServer, tmp_path: Path):
    from tests.budgets.conftest import provider

    path = tmp_path / "ask.yaml"
    path.write_text(
        f"roost: 1\ndefaults: {{provider: llm}}\nproviders:\n  llm: {provider(server)}\n"
        "agents: {USER: {interrupt: ALWAYS}, a: {role: You are a.}}\n"
        "start: {from: USER, to: a, content: hi}\n"
    )
    first = run_cli(
        "run", "ask.yaml", "--events", "e.jsonl", "--no-input", cwd=tmp_path, env=env(tmp_path)
    )
    assert first.returncode == 0, first.stderr
    again = run_cli("continue", "e.jsonl", "--budget", "0.3", "--answer", "go on", "--no-input",
                    cwd=tmp_path, env=env(tmp_path))  # fmt: skip
    assert again.returncode == 0, again.stderr
    events = events_of(tmp_path / "e.jsonl")
    raised = [e for e in events if isinstance(e, BudgetEvent) and e.action == "raised"]
    assert [(e.limit, e.allowed, e.node) for e in raised] == [("cost", 0.3, None)]
    replayed = run_cli("replay", "e.jsonl", cwd=tmp_path, env=env(tmp_path))
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout
