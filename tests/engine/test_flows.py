"""A run that goes on under another flow: the ``flow`` event, the fold, the Runner, replay."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner, fold
from roost.engine.flows import check_keeps_history, flow_in_force, flow_parts
from roost.engine.replay import replay_run, stop_points
from roost.engine.unfinished import unfinished
from roost.errors import FlowError, RunStateError
from roost.events import FlowEvent, MessageEvent, RetryEvent, parse_event
from roost.flow import load_flow_text
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow

# The writer's role fails as a template (a division by zero) until the flow is fixed.
BROKEN = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 3}
providers:
  mock:
    kind: scripted
    replies: [{echo: system}, "ok", {echo: system}, "ok", {echo: system}]
agents:
  writer: {role: "You write. {{ 1 // 0 }}"}
  critic: {role: You criticise.}
start: {from: critic, to: writer, content: Write a poem}
"""
FIXED = BROKEN.replace("{{ 1 // 0 }}", "Be brief.")


def flow_file(folder: Path, text: str, name: str) -> Flow:
    path = folder / name
    path.write_text(text)
    return load_flow_text(text, str(path))


async def stopped_at_the_template(folder: Path) -> tuple[MemoryLog, Flow]:
    log = MemoryLog("run-1")
    broken = flow_file(folder, BROKEN, "chat.yaml")
    state = await Runner(flow=broken, log=log).start()
    assert state.status == "error" and "ZeroDivisionError" in state.pending.content  # type: ignore[union-attr]
    return log, broken


async def test_a_fixed_flow_rescues_a_run_stopped_by_its_flow(tmp_path: Path) -> None:
    log, broken = await stopped_at_the_template(tmp_path)
    # Retried under its own flow, the run fails the same way, for ever.
    again = await Runner(flow=broken, log=log).retry()
    assert again.status == "error"
    runner = Runner(flow=broken, log=log)
    fixed = flow_file(tmp_path, FIXED, "fixed.yaml")
    runner.follow(fixed)
    state = await runner.retry()
    assert state.status == "terminated"
    events = log.load()
    change = next(e for e in events if isinstance(e, FlowEvent))
    # The flow event comes right before the retry it rescues, and names the fixed file.
    assert isinstance(events[change.seq + 1], RetryEvent)
    assert change.flow.path == str(tmp_path / "fixed.yaml") and change.flow.text == FIXED
    assert change.flow.hash == fold(events).flow_hash
    # The writer answered under the fixed role (the scripted reply echoes it).
    said = [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "writer"]
    assert said[0] == "You write. Be brief."


async def test_the_fold_knows_the_flow_in_force(tmp_path: Path) -> None:
    log, _ = await stopped_at_the_template(tmp_path)
    runner = Runner(flow=flow_file(tmp_path, BROKEN, "chat.yaml"), log=log)
    runner.follow(flow_file(tmp_path, FIXED, "fixed.yaml"))
    await runner.retry()
    events = log.load()
    state = fold(events)
    assert state.flow_path == str(tmp_path / "fixed.yaml")
    change = next(e for e in events if isinstance(e, FlowEvent))
    before = fold(events[: change.seq])
    assert before.flow_path == str(tmp_path / "chat.yaml")
    # A flow event changes nothing else: the status and history are those before it.
    at_change = fold(events[: change.seq + 1])
    assert (at_change.status, len(at_change.history)) == (before.status, len(before.history))
    parts = flow_parts(events)
    assert [p.start for p in parts] == [0, change.seq]
    assert flow_in_force(events) == change.flow


async def test_a_flow_without_a_node_of_the_history_is_refused(tmp_path: Path) -> None:
    log, broken = await stopped_at_the_template(tmp_path)
    before = log.load()
    text = FIXED.replace("  critic: {role: You criticise.}\n", "  editor: {role: You edit.}\n")
    text = text.replace("from: critic", "from: editor")
    partial = flow_file(tmp_path, text, "partial.yaml")
    with pytest.raises(FlowError) as refused:
        Runner(flow=broken, log=log).follow(partial)
    assert str(refused.value).startswith(f"{tmp_path / 'partial.yaml'}:8:")
    assert "'critic' (event 1)" in str(refused.value)
    with pytest.raises(FlowError):
        Runner(flow=partial, log=log)  # taking over by being given to the Runner is refused alike
    assert log.load() == before


def test_a_channel_must_stay_a_channel(tmp_path: Path) -> None:
    room = """\
roost: 1
name: room
defaults: {provider: mock}
providers: {mock: {kind: scripted, replies: [hi]}}
agents:
  user: {}
  a: {role: A.}
channels:
  room: {members: [a], director: {strategy: round_robin}}
start: {from: user, to: room, content: hi}
"""
    base = {"run": "r", "ts": "t"}
    events = [
        parse_event({**base, "seq": 1, "type": "message", "from": "user", "to": "room",
                     "content": "hi"}),
        parse_event({**base, "seq": 2, "type": "select", "channel": "room", "candidates": ["a"],
                     "chosen": "a", "by": "round_robin"}),
    ]  # fmt: skip
    flat = room.split("channels:")[0] + room.split("round_robin}}\n")[1]
    flat = flat.replace("  a: {role: A.}\n", "  a: {role: A.}\n  room: {role: R.}\n")
    with pytest.raises(FlowError, match="'room' is a channel in the run's history"):
        check_keeps_history(flow_file(tmp_path, flat, "flat.yaml"), events)
    check_keeps_history(flow_file(tmp_path, room, "room.yaml"), events)


async def test_a_refused_step_writes_no_flow_event_and_the_next_one_does(tmp_path: Path) -> None:
    log, broken = await stopped_at_the_template(tmp_path)
    runner = Runner(flow=broken, log=log)
    runner.follow(flow_file(tmp_path, FIXED, "fixed.yaml"))
    with pytest.raises(RunStateError):
        await runner.continue_("hello")  # the run is not paused: nothing is written
    assert not any(isinstance(e, FlowEvent) for e in log.load())
    await runner.retry()
    assert sum(isinstance(e, FlowEvent) for e in log.load()) == 1


async def test_a_runner_given_another_flow_records_the_change(tmp_path: Path) -> None:
    log, _ = await stopped_at_the_template(tmp_path)
    state = await Runner(flow=flow_file(tmp_path, FIXED, "fixed.yaml"), log=log).retry()
    assert state.status == "terminated"
    assert sum(isinstance(e, FlowEvent) for e in log.load()) == 1
    # The same flow again is no change: nothing more is recorded.
    count = len(log.load())
    with pytest.raises(RunStateError):
        await Runner(flow=flow_file(tmp_path, FIXED, "fixed.yaml"), log=log).retry()
    assert len(log.load()) == count


async def test_replay_follows_each_part_under_its_own_flow(tmp_path: Path) -> None:
    log, broken = await stopped_at_the_template(tmp_path)
    runner = Runner(flow=broken, log=log)
    runner.follow(flow_file(tmp_path, FIXED, "fixed.yaml"))
    await runner.retry()
    recorded = log.load()
    report = await replay_run(None, recorded)
    assert report.identical, report.difference
    # One flow for the whole run cannot give both parts: the broken one fails where the
    # fixed one answered, the fixed one answers where the broken one failed.
    for text in (BROKEN, FIXED):
        whole = await replay_run(flow_file(tmp_path, text, "whole.yaml"), recorded)
        assert not whole.identical


async def test_a_flow_change_at_a_dead_process_replays(tmp_path: Path) -> None:
    # The process died right after the start message; the run is then retried under
    # another flow: the replay stops where the process stopped, before the flow event.
    fixed = flow_file(tmp_path, FIXED, "fixed.yaml")
    log = MemoryLog("run-1")
    await Runner(flow=fixed, log=log).start()
    dead = MemoryLog("run-1")
    dead.append(log.load()[:2])
    assert fold(dead.load()).status == "running"
    calmer = flow_file(tmp_path, FIXED.replace("Be brief.", "Be calm."), "calmer.yaml")
    runner = Runner(flow=fixed, log=dead)
    runner.follow(calmer)
    await runner.retry()
    recorded = dead.load()
    assert [e.type for e in recorded[2:4]] == ["flow", "retry"]
    assert stop_points(recorded) == [2]
    assert unfinished(recorded[:3]).last == recorded[1]  # the flow event does no part of a step
    report = await replay_run(None, recorded)
    assert report.identical, report.difference


async def test_a_flow_change_after_an_error_is_no_stop_point(tmp_path: Path) -> None:
    log, broken = await stopped_at_the_template(tmp_path)
    runner = Runner(flow=broken, log=log)
    runner.follow(flow_file(tmp_path, FIXED, "fixed.yaml"))
    await runner.retry()
    assert stop_points(log.load()) == []
