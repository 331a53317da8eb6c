"""``drive``: a run's first step, then each pause answered until the run ends or nobody answers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import roost
from roost.cli.run_commands import TerminalSession
from roost.driving import Callback, drive, leave_paused, pause_at
from roost.engine import Runner
from roost.engine.images import load_image
from roost.errors import RunStateError
from roost.events import ResumeEvent
from roost.testing import call, flow_from_yaml
from tests.fakes.flows import MANUAL_CHANNEL
from tests.pictures import png

if TYPE_CHECKING:
    from roost.driving import Said

ASSISTANT = Path(__file__).resolve().parent.parent / "flows" / "assistant.yaml"

# A helper whose tool call waits for the person's approval.
APPROVE = """
    roost: 1
    tools:
      mean: {python: "statistics:fmean", description: The mean., approval: always}
    agents:
      USER: {role: A person with numbers.}
      helper: {role: You answer with your tools., functions: [mean]}
    start: {from: USER, to: helper, content: "The mean of 2, 4 and 9?"}
"""
APPROVE_REPLIES = [call("mean", data=[2, 4, 9]), "The mean is 5.", "TERMINATE"]


def _runner(flow: roost.Flow | None = None, run_id: str = "run") -> Runner:
    return Runner(flow=flow or roost.load_flow(ASSISTANT), log=roost.MemoryLog(run_id))


def _fed(runner: Runner) -> list[str]:
    return [e.feedback for e in runner.log.load() if isinstance(e, ResumeEvent)]


async def test_a_python_callback_answers_each_pause_until_the_end() -> None:
    asked: list[str] = []

    def answer(pause: roost.Pause) -> str:
        asked.append(pause.node)
        return "Thanks!"

    runner = _runner()
    state = await drive(runner, lambda r: r.start(), Callback(answer))
    assert state.status == "terminated"
    assert asked == ["USER", "USER"]
    assert _fed(runner) == ["Thanks!", "Thanks!"]


async def test_an_async_callback_is_awaited_and_none_leaves_the_run_paused() -> None:
    replies = iter(["Four of us.", None])

    async def answer(pause: roost.Pause) -> Said:
        await asyncio.sleep(0)
        return next(replies)

    runner = _runner()
    state = await drive(runner, lambda r: r.start(), Callback(answer))
    assert state.status == "paused"
    assert _fed(runner) == ["Four of us."]
    assert runner.log.load()[-1].type == "interrupt"


async def test_without_an_answerer_the_run_rests_at_its_first_pause() -> None:
    runner = _runner()
    state = await drive(runner, lambda r: r.start(), None)
    assert state.status == "paused"
    assert _fed(runner) == []


async def test_a_batch_row_answers_nothing() -> None:
    runner = _runner()
    state = await drive(runner, lambda r: r.start(), leave_paused)
    assert state.status == "paused"
    assert _fed(runner) == []


async def test_the_terminal_answers_with_each_answer_option_then_leaves_it_paused() -> None:
    runner = _runner()
    session = TerminalSession(
        runner.flow, runner.log, db=None, answers=["Four of us."], no_input=True, ref="run"
    )
    state = await drive(session.runner(), lambda r: r.start(), session.answer)
    assert state.status == "paused"  # no answer left, and no terminal to ask in
    assert _fed(session.runner()) == ["Four of us."]


async def test_a_pause_answers_approval_and_refusal() -> None:
    approved = _runner(flow_from_yaml(APPROVE, replies=APPROVE_REPLIES), "approved")
    said = await drive(approved, lambda r: r.start(), Callback(lambda pause: pause.approve()))
    assert said.status == "terminated"
    refused = _runner(flow_from_yaml(APPROVE, replies=APPROVE_REPLIES), "refused")
    await drive(refused, lambda r: r.start(), Callback(lambda pause: pause.refuse("not now")))
    assert _fed(refused) == ["not now"]


async def test_a_run_at_a_pause_is_answered_first_and_images_go_with_that_answer(
    tmp_path: Path,
) -> None:
    (tmp_path / "dot.png").write_bytes(png())
    runner = _runner()
    await runner.start()
    replies = iter(["Look.", "Thanks!"])
    images = [load_image("dot.png", tmp_path)]
    state = await drive(runner, None, Callback(lambda pause: next(replies)), images=images)
    assert state.status == "terminated"
    resumes = [e for e in runner.log.load() if isinstance(e, ResumeEvent)]
    assert [(e.feedback, len(e.images or ())) for e in resumes] == [("Look.", 1), ("Thanks!", 0)]


async def test_a_refused_continuation_is_raised_unless_refused_asks_again() -> None:
    choices = iter(["nobody", "y"])
    answer = Callback(lambda pause: next(choices))
    flow = flow_from_yaml(MANUAL_CHANNEL, replies=["I am y."])
    with pytest.raises(RunStateError):
        await drive(_runner(flow, "raised"), lambda r: r.start(), answer)
    told: list[RunStateError] = []
    choices = iter(["nobody", "y"])

    def again(error: RunStateError) -> bool:
        told.append(error)
        return True

    runner = _runner(flow, "again")
    state = await drive(runner, lambda r: r.start(), answer, refused=again)
    assert len(told) == 1
    assert state.last_message is not None and state.last_message.from_ == "y"


async def test_pause_at_a_run_not_paused_is_none() -> None:
    runner = _runner()
    assert pause_at(runner, runner.state) is None  # new
    state = await runner.start()
    pause = pause_at(runner, state)
    assert pause is not None and (pause.kind, pause.node) == ("person", "USER")
