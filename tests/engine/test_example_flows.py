"""The example flows in flows/ run offline to the end with the answers their comments give."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost import load_flow
from roost.engine import Runner
from roost.ports import MemoryLog

FLOWS = Path(__file__).resolve().parents[2] / "flows"

CASES = {
    "hello.yaml": [],
    "assistant.yaml": ["Four of us, in a park.", "Thanks!"],
    "math-chat.yaml": ["Thank you, that is all."],
    "content-team.yaml": ["Approved, ship it."],
    "debate.yaml": [],
    "review_loop.yaml": ["Signed off."],
    "looping-director.yaml": [],  # never ends by itself: its budget stops it
}


@pytest.mark.parametrize(("name", "answers"), CASES.items())
async def test_example_flow_runs_to_the_end(name: str, answers: list[str]) -> None:
    path = FLOWS / name
    assert path.read_text().startswith("# yaml-language-server: $schema=")
    assert "real model" in path.read_text()
    flow = load_flow(path)
    runner = Runner(flow=flow, log=MemoryLog("example"))
    state = await runner.start()
    for answer in answers:
        assert state.status == "paused", name
        state = await runner.continue_(answer)
    assert state.status == "terminated", (name, state.status, state.pending)


async def test_the_looping_director_is_stopped_by_its_budget() -> None:
    log = MemoryLog("loop")
    state = await Runner(flow=load_flow(FLOWS / "looping-director.yaml"), log=log).start()
    assert state.status == "terminated"
    assert [e.type for e in log.load()[-2:]] == ["budget", "terminate"]
    assert sum(e.type == "llm_call" for e in log.load()) == 40


async def test_the_debate_follows_its_transitions() -> None:
    runner = Runner(flow=load_flow(FLOWS / "debate.yaml"), log=MemoryLog("debate"))
    state = await runner.start()
    speakers = [entry.from_ for entry in state.history[1:]]
    assert speakers == ["moderator", "pro", "con", "moderator", "pro", "con", "moderator"]


async def test_the_math_chat_asks_the_client_chosen_by_the_director() -> None:
    runner = Runner(flow=load_flow(FLOWS / "math-chat.yaml"), log=MemoryLog("math"))
    state = await runner.start()
    assert state.status == "paused"
    assert (state.pending.from_, state.pending.to) == ("client", "math")  # type: ignore[union-attr]
