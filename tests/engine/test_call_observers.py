"""Who hears of a model call (``limits.observers``), for a provider that never waits."""

from __future__ import annotations

import pytest

from roost.providers import limits
from roost.providers.scripted import ScriptedProvider
from tests.engine.conftest import runner_for

FLOW = """
roost: 1
name: told
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [one, two, {error: down}]}
agents:
  USER: {role: A person.}
  a: {role: A.}
  b: {role: B.}
channels:
  team:
    members: [a, b]
    max_rounds: 5
    director: {strategy: round_robin}
start: {from: USER, to: team, content: Go}
"""


@pytest.fixture
def heard() -> list[tuple[str, bool]]:
    told: list[tuple[str, bool]] = []

    def observer(provider: str, seconds: float, waited: float, failed: bool) -> None:
        assert seconds >= 0 and waited == 0.0  # a scripted provider never waits
        told.append((provider, failed))

    limits.observers.append(observer)
    yield told
    limits.observers.remove(observer)


async def test_an_observer_hears_of_every_scripted_call_and_its_failure(
    heard: list[tuple[str, bool]],
) -> None:
    runner, log = runner_for(FLOW)
    state = await runner.start()
    assert state.status == "error"
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert len(calls) == 3 and calls[-1].error
    assert heard == [("mock", False), ("mock", False), ("mock", True)]
    assert all(call.waited is None for call in calls)


async def test_unobserved_scripted_calls_are_recorded_the_same() -> None:
    assert ScriptedProvider.takes_turns is False and not limits.observers
    runner, log = runner_for(FLOW)
    await runner.start()
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert [c.error is None for c in calls] == [True, True, False]
    assert all(call.waited is None for call in calls)
