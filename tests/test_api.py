"""The front door: ``roost.run``/``run_sync`` run a flow to its end, answering its pauses."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import roost
from roost.testing import call, fail, flow_from_yaml

if TYPE_CHECKING:
    from roost.engine import RunState

ROOT = Path(__file__).resolve().parent.parent
HELLO = ROOT / "flows" / "hello.yaml"
ASSISTANT = ROOT / "flows" / "assistant.yaml"

# A person asked at every turn, and a helper whose tool needs the person's approval.
APPROVE = """
    roost: 1
    tools:
      mean: {python: "statistics:fmean", description: The mean., approval: always}
    agents:
      USER: {role: A person with numbers., interrupt: ALWAYS}
      helper: {role: You answer with your tools., functions: [mean]}
    start: {from: USER, to: helper, content: "The mean of 2, 4 and 9?"}
"""
APPROVE_REPLIES = [call("mean", data=[2, 4, 9]), "The mean is 5.", "TERMINATE"]


def _said(state: RunState) -> list[tuple[str, str]]:
    return [(entry.from_, entry.content) for entry in state.history if entry.state == "success"]


async def test_a_flow_file_runs_to_its_end() -> None:
    state = await roost.run(HELLO)
    assert state.status == "terminated"
    assert state.terminated_by == "USER"
    assert _said(state)[0] == ("USER", "Hi there!")
    assert _said(state)[-1] == ("assistant", "TERMINATE")


async def test_the_message_starts_the_run_as_written() -> None:
    state = await roost.run(roost.load_flow(HELLO), "Hi! One question.")
    assert _said(state)[0] == ("USER", "Hi! One question.")


async def test_without_answer_the_run_stays_at_its_first_pause() -> None:
    log = roost.MemoryLog("paused")
    state = await roost.run(ASSISTANT, log=log)
    assert state.status == "paused"
    assert state.pending is not None
    assert (state.pending.from_, state.pending.reason) == ("USER", "human")
    assert [event.type for event in log.load()][-1] == "interrupt"


async def test_each_pause_is_answered_by_the_callable_until_the_end() -> None:
    asked: list[tuple[str, str]] = []
    answers = iter(["Four of us, in a park.", "Thanks!"])

    def answer(state: RunState) -> str:
        assert state.status == "paused" and state.pending is not None
        asked.append((state.pending.from_, state.last_message.content))
        return next(answers)

    state = await roost.run(ASSISTANT, answer=answer)
    assert state.status == "terminated"
    assert [who for who, _ in asked] == ["USER", "USER"]
    said = _said(state)
    assert ("USER", "Four of us, in a park.") in said
    assert ("USER", "Thanks!") in said


async def test_an_async_answer_is_awaited() -> None:
    async def answer(state: RunState) -> str:
        await asyncio.sleep(0)
        return "Thanks!"

    state = await roost.run(ASSISTANT, answer=answer)
    assert state.status == "terminated"


async def test_answer_none_leaves_the_run_paused_where_it_is() -> None:
    replies = iter(["Four of us, in a park.", None])
    log = roost.MemoryLog("half")
    state = await roost.run(ASSISTANT, answer=lambda state: next(replies), log=log)
    assert state.status == "paused"
    messages = [e.content for e in log.load() if e.type == "message" and e.from_ == "USER"]
    assert messages[-1] == "Four of us, in a park."
    assert log.load()[-1].type == "interrupt"


async def test_tool_approvals_are_answered_the_same_way() -> None:
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    seen: list[tuple[str, str | None]] = []

    def answer(state: RunState) -> str:
        assert state.pending is not None
        tool = state.pending.tool_call["name"] if state.pending.tool_call else None
        seen.append((state.pending.reason, tool))
        return "yes" if state.pending.reason == "tool_approval" else "Thanks!"

    log = roost.MemoryLog("approved")
    state = await roost.run(flow, answer=answer, log=log)
    assert state.status == "terminated"
    assert seen == [("tool_approval", "mean"), ("human", None)]
    results = [(e.content, e.is_error) for e in log.load() if e.type == "tool_result"]
    assert results == [("5.0", False)]


async def test_a_refused_tool_call_is_not_run() -> None:
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    log = roost.MemoryLog("refused")
    await roost.run(flow, answer=lambda state: "no", log=log)
    results = [(e.content, e.is_error) for e in log.load() if e.type == "tool_result"]
    assert results == [("The person did not approve this call.", True)]


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ("y", ("5.0", False)),
        ("Yes", ("5.0", False)),
        ("n", ("The person did not approve this call.", True)),
        ("later, please", ("The person did not approve this call: later, please", True)),
    ],
)
async def test_a_run_reads_an_approval_as_yes_y_no_n_or_a_reason(
    answer: str, result: tuple[str, bool]
) -> None:
    flow = flow_from_yaml(APPROVE, replies=APPROVE_REPLIES)
    log = roost.MemoryLog("approval")
    await roost.run(flow, answer=lambda state: answer, log=log)
    results = [(e.content, e.is_error) for e in log.load() if e.type == "tool_result"]
    assert results == [result]


async def test_a_log_holding_a_paused_run_goes_on_from_its_pause(tmp_path: Path) -> None:
    path = tmp_path / "picnic.jsonl"
    first = await roost.run(ASSISTANT, log=roost.JsonlLog(path, "picnic"))
    assert first.status == "paused"
    state = await roost.run(ASSISTANT, answer=lambda state: "Thanks!", log=roost.JsonlLog(path))
    assert state.status == "terminated"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["type"] for e in events].count("run_start") == 1
    assert {e["run"] for e in events} == {"picnic"}


async def test_a_message_for_a_run_that_has_started_is_refused_and_nothing_is_written() -> None:
    log = roost.MemoryLog("started")
    await roost.run(ASSISTANT, log=log)
    before = log.load()
    with pytest.raises(roost.RunStateError, match="has started already"):
        await roost.run(ASSISTANT, "Hello again", log=log)
    assert log.load() == before


async def test_a_failed_step_ends_the_call_with_status_error() -> None:
    flow = flow_from_yaml(
        """
        roost: 1
        agents:
          USER: {role: A person.}
          bot: {role: You greet people.}
        start: {from: USER, to: bot, content: Hello}
        """,
        replies=[fail("the server is busy"), "Hello again!", "TERMINATE"],
    )
    log = roost.MemoryLog("failed")
    state = await roost.run(flow, log=log)
    assert state.status == "error"
    assert state.pending is not None and "the server is busy" in state.pending.content
    again = await roost.Runner(flow=flow, log=log).retry()
    assert again.status == "terminated"


async def test_an_answer_that_is_not_text_is_refused_in_one_line() -> None:
    with pytest.raises(roost.RoostError, match="answer returned int: give the answer as text"):
        await roost.run(ASSISTANT, answer=lambda state: 42)  # type: ignore[arg-type,return-value]


async def test_a_flow_file_that_does_not_load_raises_flow_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("roost: 1\nagents: {a: {provider: nowhere}}\n")
    with pytest.raises(roost.FlowError) as caught:
        await roost.run(path)
    assert str(caught.value).startswith(f"{path}:2:")


def test_run_sync_runs_without_an_event_loop() -> None:
    answers = iter(["Four of us, in a park.", "Thanks!"])
    state = roost.run_sync(ASSISTANT, answer=lambda state: next(answers))
    assert state.status == "terminated"


def test_run_sync_accepts_an_async_answer() -> None:
    async def answer(state: RunState) -> str:
        return "Thanks!"

    assert roost.run_sync(ASSISTANT, answer=answer).status == "terminated"


async def test_run_sync_inside_a_running_loop_points_at_await_roost_run() -> None:
    gc.collect()  # what earlier tests left behind warns now, not below
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            roost.run_sync(HELLO)
        except roost.RoostError as error:
            message = str(error)  # the error and its frames go at the end of this block
        else:
            pytest.fail("run_sync ran inside a running event loop")
        gc.collect()  # a coroutine made and dropped would warn here
    assert "cannot run inside a running event loop" in message
    assert "await roost.run(...)" in message
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_every_exported_name_resolves_and_import_roost_loads_none_of_them() -> None:
    for name in roost.__all__:
        assert getattr(roost, name) is not None, name
    assert {"run", "run_sync", "Runner", "RunState", "MemoryLog", "JsonlLog", "SqlStore"} <= set(
        dir(roost)
    )
    code = "import json, sys, roost; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.startswith("roost")] == ["roost"]
    assert "pydantic" not in loaded
