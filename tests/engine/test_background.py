"""Background sub-flow tasks: a task id at once, the result later as a message.

Flows are written to a temporary folder and run with scripted models against a
SQLite store, as ``roost run`` keeps them; the child flows' own tools wait for
a file the test writes, so that a test decides when a child may end.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fakes.runners import runner_options

from roost.cli.logs import open_store
from roost.engine import Runner
from roost.engine.background import BackgroundTasks, over_cap, task_rows
from roost.engine.replay import replay_run
from roost.events import BackgroundEvent, Event, MessageEvent, ToolCallEvent, ToolResultEvent
from roost.flow import read_flow
from roost.runstate import fold
from roost.workspace import Workspace
from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from roost.ports import EventLog

WAITING_TOOL = '''\
import asyncio
from pathlib import Path


async def wait_for(name: str) -> str:
    """Waits until the file NAME exists beside this module, and gives its text."""
    path = Path(__file__).parent / name
    for _ in range(3000):  # a bound, so that a broken test fails rather than hangs
        if path.exists():
            return path.read_text()
        await asyncio.sleep(0.01)
    return "gave up waiting"
'''

# A child that waits for the file ``go`` and then says what it found there.
SLOW_CHILD = """\
roost: 1
name: slow-research
description: Researches slowly.
providers:
  p:
    kind: scripted
    replies:
      - tool_calls: [{name: wait_for, arguments: {name: go}}]
      - {echo: last}
tools:
  wait_for: {python: "bg_waiting:wait_for", timeout: 120}
agents:
  USER: {interrupt: ALWAYS}
  researcher: {provider: p, functions: [wait_for]}
start: {from: USER, to: researcher}
"""

ECHO_CHILD = """\
roost: 1
name: echo-research
description: Answers with its topic.
providers:
  p: {kind: scripted, replies: [{echo: last}]}
agents:
  USER: {interrupt: ALWAYS}
  researcher: {provider: p}
start: {from: USER, to: researcher}
"""

FAILING_CHILD = """\
roost: 1
name: failing-research
providers:
  p: {kind: scripted, replies: [{error: the model is down}]}
agents:
  USER: {interrupt: ALWAYS}
  researcher: {provider: p}
start: {from: USER, to: researcher}
"""

PARENT = """\
roost: 1
name: boss-flow
defaults: {{provider: mock{defaults}}}
providers:
  mock:
    kind: scripted
    replies:
{replies}
tools:
  slow: {{flow: slow.yaml, background: true}}
  echo: {{flow: echo.yaml, background: true}}
  failing: {{flow: failing.yaml, background: true}}
  gated: {{flow: echo.yaml, background: true, approval: always}}
agents:
  USER: {{interrupt: ALWAYS}}
  boss: {{functions: [slow, echo, failing, gated]{agent}}}
start: {{from: USER, to: boss, content: go}}
"""


def call(tool: str, topic: str) -> str:
    return f"{{name: {tool}, arguments: {{message: {topic}}}}}"


def write_flows(folder: Path, replies: list[str], *, defaults: str = "", agent: str = "") -> Path:
    (folder / "bg_waiting.py").write_text(WAITING_TOOL)
    (folder / "slow.yaml").write_text(SLOW_CHILD)
    (folder / "echo.yaml").write_text(ECHO_CHILD)
    (folder / "failing.yaml").write_text(FAILING_CHILD)
    shown = "\n".join(f"      - {reply}" for reply in replies)
    path = folder / "parent.yaml"
    path.write_text(PARENT.format(replies=shown, defaults=defaults, agent=agent))
    return path


class Stored:
    """A run of the parent flow in a SQLite store, children stored beside it."""

    def __init__(self, folder: Path, flow_path: Path) -> None:
        self.db = str(folder / "runs.db")
        self.flow = read_flow(flow_path)
        workspace = Workspace(self.db)
        self.log: EventLog = workspace.new_log("parent-run")
        self.children = workspace.child_logs()

    def runner(self, **options: Any) -> Runner:
        return Runner(
            flow=self.flow, log=self.log, child_log=self.children, **runner_options(options)
        )

    def events(self) -> list[Event]:
        return self.log.load()

    def child(self, run_id: str) -> list[Event]:
        return self.children(run_id).load()


def deliveries(events: list[Event]) -> list[MessageEvent]:
    return [e for e in events if isinstance(e, MessageEvent) and e.background is not None]


def started(events: list[Event]) -> list[BackgroundEvent]:
    return [e for e in events if isinstance(e, BackgroundEvent)]


async def test_the_result_arrives_later_as_a_message_the_agent_answers(tmp_path: Path) -> None:
    first = f"{{tool_calls: [{call('slow', 'owls')}]}}"
    replies = [first, "I started the research.", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))

    def on_event(event: Event) -> None:
        # The child may end only once the boss has spoken after starting it: were the
        # child run before the call is answered, it would wait in vain.
        if isinstance(event, MessageEvent) and event.content == "I started the research.":
            (tmp_path / "go").write_text("owls live in trees")

    state = await run.runner(on_event=on_event).start()
    events = run.events()
    assert state.status == "paused" and not state.background
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    (task,) = started(events)
    assert (task.task, task.agent, task.to, task.tool) == ("bg-1", "boss", "USER", "slow")
    assert task.call == result.id and task.child_run == result.child_run
    assert result.content.startswith("Started slow in the background as task bg-1")
    (delivered,) = deliveries(events)
    assert (delivered.from_, delivered.to) == ("USER", "boss")
    assert delivered.background is not None
    assert (delivered.background.task, delivered.background.status) == ("bg-1", "done")
    assert delivered.content.endswith("\n\nowls live in trees")
    assert delivered.content.startswith(f"[background task bg-1 (slow, run {task.child_run})")
    messages = [(e.from_, e.to, e.content) for e in events if isinstance(e, MessageEvent)]
    assert messages == [
        ("USER", "boss", "go"),
        ("boss", "USER", "I started the research."),
        ("USER", "boss", delivered.content),
        ("boss", "USER", delivered.content),  # the boss answered the delivered result
    ]
    child = run.child(task.child_run)
    assert fold(child).status == "paused"  # the child ran to its end as a run of its own


async def test_a_run_waits_for_open_tasks_before_it_ends(tmp_path: Path) -> None:
    replies = [
        f"{{tool_calls: [{call('echo', 'first')}, {call('echo', 'second')}]}}",
        "TERMINATE",
        "noted one",
        "noted two TERMINATE",
    ]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    state = await run.runner().start()
    events = run.events()
    assert state.status == "terminated"
    assert [t.task for t in started(events)] == ["bg-1", "bg-2"]
    delivered = sorted(d.background.task for d in deliveries(events) if d.background)
    assert delivered == ["bg-1", "bg-2"]  # in the order they ended
    said = [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "boss"]
    # TERMINATE with two tasks open: each result comes first, and the boss answers each.
    assert said == ["TERMINATE", "noted one", "noted two TERMINATE"]
    assert events[-1].type == "terminate"


async def test_max_background_refuses_a_task_over_the_cap(tmp_path: Path) -> None:
    for defaults, agent in ((", max_background: 1", ""), ("", ", max_background: 1")):
        folder = tmp_path / ("flow" if defaults else "agent")
        folder.mkdir()
        first = f"{{tool_calls: [{call('echo', 'one')}, {call('echo', 'two')}]}}"
        replies = [first, "started what I could", "{echo: last}"]
        run = Stored(folder, write_flows(folder, replies, defaults=defaults, agent=agent))
        state = await run.runner().start()
        events = run.events()
        assert state.status == "paused"
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [r.is_error for r in results] == [False, True]
        assert "max_background 1" in results[1].content
        assert "this one was not started" in results[1].content
        assert results[1].child_run is None
        assert [t.call for t in started(events)] == [results[0].id]
        assert len(deliveries(events)) == 1


async def test_a_task_over_the_cap_while_others_are_open_is_refused(tmp_path: Path) -> None:
    # One round starts a task; the next round, with it still open, may not start another.
    replies = [
        f"{{tool_calls: [{call('echo', 'one')}]}}",
        f"{{tool_calls: [{call('echo', 'two')}]}}",
        "one is running",
        "{echo: last}",
    ]
    run = Stored(tmp_path, write_flows(tmp_path, replies, defaults=", max_background: 1"))
    await run.runner().start()
    results = [e for e in run.events() if isinstance(e, ToolResultEvent)]
    assert [r.is_error for r in results] == [False, True]
    assert results[1].content.startswith("1 background tasks are open already")


async def test_a_failing_child_is_delivered_as_a_failure(tmp_path: Path) -> None:
    replies = [f"{{tool_calls: [{call('failing', 'x')}]}}", "waiting", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    state = await run.runner().start()
    (delivered,) = deliveries(run.events())
    assert state.status == "paused"
    assert delivered.background is not None and delivered.background.status == "failed"
    assert "failed]" in delivered.content.splitlines()[0]
    assert "sub-flow 'failing-research' failed" in delivered.content
    assert "the model is down" in delivered.content
    assert [row.status for row in task_rows(run.events())] == ["failed"]


async def test_a_run_stopped_while_waiting_is_resumed_and_its_child_retried(
    tmp_path: Path,
) -> None:
    replies = [f"{{tool_calls: [{call('slow', 'owls')}]}}", "started", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    # The process stops: its step and its child runs are cancelled where they are.
    await stop_while_waiting(run.runner())
    (task,) = started(run.events())
    assert fold(run.events()).status == "running" and not deliveries(run.events())
    child = run.child(task.child_run)
    assert fold(child).status == "running"  # stopped inside its own tool call
    assert isinstance(child[-1], ToolCallEvent)

    state = await run.runner().retry()  # another process picks the run up from the log
    events = run.events()
    assert state.status == "paused"
    (delivered,) = deliveries(events)
    assert delivered.background is not None and delivered.background.status == "done"
    child = run.child(task.child_run)
    assert fold(child).status == "paused" and any(e.type == "retry" for e in child)
    # The child's interrupted tool call was closed, not run again: its result says so.
    assert "stopped before it finished" in delivered.content


async def test_a_child_that_ended_meanwhile_is_delivered_from_its_log(tmp_path: Path) -> None:
    replies = [f"{{tool_calls: [{call('slow', 'owls')}]}}", "started", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    await stop_while_waiting(run.runner())
    (task,) = started(run.events())
    # Someone retries the child by itself to its end while the parent is stopped.
    child_flow = read_flow(tmp_path / "slow.yaml")
    await Runner(flow=child_flow, log=run.children(task.child_run)).retry()
    ended = run.child(task.child_run)
    assert fold(ended).status == "paused"

    await run.runner().retry()
    (delivered,) = deliveries(run.events())
    assert run.child(task.child_run) == ended  # read as it ended: not run again
    assert delivered.content.split("\n\n", 1)[1] == ended_text(ended)


def ended_text(events: list[Event]) -> str:
    return next(e.content for e in reversed(events) if isinstance(e, MessageEvent))


async def test_replay_of_background_runs_is_identical_and_runs_no_child(tmp_path: Path) -> None:
    replies = [
        f"{{tool_calls: [{call('echo', 'one')}, {call('failing', 'two')}]}}",
        "TERMINATE",
        "{echo: last}",
        "{echo: last}",
        "TERMINATE",
    ]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    await run.runner().start()
    recorded = run.events()
    assert len(deliveries(recorded)) == 2
    store = open_store(run.db)
    children = store.children("parent-run")
    assert len(children) == 2
    report = await replay_run(None, recorded)
    assert report.identical, report.difference
    assert store.children("parent-run") == children  # no child run made again


async def test_replay_of_a_run_resumed_after_a_stop_is_identical(tmp_path: Path) -> None:
    replies = [f"{{tool_calls: [{call('slow', 'owls')}]}}", "started", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    await stop_while_waiting(run.runner())
    await run.runner().retry()
    recorded = run.events()
    assert any(e.type == "retry" for e in recorded) and deliveries(recorded)
    report = await replay_run(None, recorded)
    assert report.identical, report.difference


def test_roost_show_lists_background_tasks_and_continue_picks_children_up(
    tmp_path: Path,
) -> None:
    # The run pauses for an approval with a slow task open; the process ends there, and
    # its child run with it. `roost continue` picks the child up from the store.
    replies = [
        f"{{tool_calls: [{call('slow', 'owls')}]}}",
        f"{{tool_calls: [{call('gated', 'cats')}]}}",
        "both started",
        "{echo: last}",
        "{echo: last}",
    ]
    flow = write_flows(tmp_path, replies)
    db = str(tmp_path / "runs.db")
    ran = run_cli("run", str(flow), "--no-input", "--db", db, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    store = open_store(db)
    (parent,) = [r for r in store.runs() if r.parent is None]
    shown = run_cli("show", parent.id, "--db", db, cwd=tmp_path)
    (task,) = started(store.log(parent.id).load())
    assert "background tasks:" in shown.stdout
    assert f"bg-1  running  slow by boss  run {task.child_run}" in shown.stdout

    (tmp_path / "go").write_text("owls found")
    answer = ("continue", parent.id, "--answer", "yes", "--no-input", "--db", db)
    continued = run_cli(*answer, cwd=tmp_path)
    assert continued.returncode == 0, continued.stderr
    events = store.log(parent.id).load()
    delivered = sorted(d.background.task for d in deliveries(events) if d.background)
    assert delivered == ["bg-1", "bg-2"]
    shown = run_cli("show", parent.id, "--db", db, cwd=tmp_path)
    rows = [line.split()[:2] for line in shown.stdout.splitlines() if line.startswith("  bg-")]
    assert rows == [["bg-1", "done"], ["bg-2", "done"]]


async def stop_while_waiting(runner: Runner) -> None:
    """Runs ``runner`` until it waits for its task, then stops it there as a dead process."""
    waiting = asyncio.Event()
    runner.on_event = lambda e: waiting.set() if getattr(e, "content", "") == "started" else None
    step = asyncio.ensure_future(runner.start())
    await waiting.wait()
    step.cancel()
    await asyncio.gather(step, return_exceptions=True)
    runner.background.cancel()  # type: ignore[attr-defined]


async def test_a_child_with_no_log_left_is_delivered_as_failed(tmp_path: Path) -> None:
    replies = [f"{{tool_calls: [{call('slow', 'owls')}]}}", "started", "{echo: last}"]
    flow = read_flow(write_flows(tmp_path, replies))
    log = open_store(str(tmp_path / "runs.db")).new_log("parent-run")
    # Child runs kept in memory: another runner (another process) has none of them.
    await stop_while_waiting(Runner(flow=flow, log=log))
    state = await Runner(flow=flow, log=log).retry()
    (delivered,) = deliveries(log.load())
    assert state.status == "paused"
    assert delivered.background is not None and delivered.background.status == "failed"
    assert "has no log to continue from: it did not finish" in delivered.content


async def test_a_step_cancelled_while_waiting_is_retried_into_the_wait(tmp_path: Path) -> None:
    replies = [f"{{tool_calls: [{call('slow', 'owls')}]}}", "started", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    runner = run.runner()
    waiting = asyncio.Event()
    runner.on_event = lambda e: waiting.set() if getattr(e, "content", "") == "started" else None
    step = asyncio.ensure_future(runner.start())
    await waiting.wait()
    assert runner.cancel()  # a person's /stop while the run waits for its task
    state = await step
    assert state.status == "error" and state.background
    (tmp_path / "go").write_text("owls found")  # the task, still running, may end now
    state = await runner.retry()
    events = run.events()
    assert state.status == "paused"
    (delivered,) = deliveries(events)
    assert delivered.content.endswith("\n\nowls found")
    boss = [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "boss"]
    assert boss == ["started", delivered.content]  # the boss answered the result, once


CHANNEL = """\
roost: 1
name: room-flow
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - tool_calls: [{name: echo, arguments: {message: owls}}]
      - I started it.
      - still waiting
      - {echo: last}
  other: {kind: scripted, replies: [ok then], when_exhausted: repeat_last}
tools:
  echo: {flow: echo.yaml, background: true}
agents:
  USER: {interrupt: ALWAYS}
  a: {functions: [echo]}
  b: {provider: other}
channels:
  room: {members: [a, b], director: {strategy: round_robin}, max_rounds: 3}
start: {from: USER, to: room, content: go}
"""


async def test_a_channel_member_is_given_its_result_by_the_channel(tmp_path: Path) -> None:
    write_flows(tmp_path, [])
    (tmp_path / "room.yaml").write_text(CHANNEL)
    log = open_store(str(tmp_path / "runs.db")).new_log("room-run")
    state = await Runner(flow=read_flow(tmp_path / "room.yaml"), log=log).start()
    events = log.load()
    # The channel's cap is reached with the task open: its result comes first.
    assert state.status == "terminated"
    (delivered,) = deliveries(events)
    assert (delivered.from_, delivered.to) == ("room", "a")
    (task,) = started(events)
    assert task.to == "room"
    answer = events[delivered.seq + 2]  # after the model call: a's answer, into the channel
    assert isinstance(answer, MessageEvent) and (answer.from_, answer.to) == ("a", "room")
    assert "@room: [background task bg-1 (echo, run" in answer.content  # a saw it
    report = await replay_run(None, events)
    assert report.identical, report.difference


async def test_no_task_starts_in_a_reply_made_past_the_conversations_cap(tmp_path: Path) -> None:
    # max_rounds 2: the boss's "started" ends the conversation, but its task is open, so
    # the result comes first; the boss's answer to it may not start another task, which
    # would keep the run going past its cap again and again.
    replies = [
        f"{{tool_calls: [{call('echo', 'one')}]}}",
        "started",
        f"{{tool_calls: [{call('echo', 'two')}]}}",
        "fine, done",
    ]
    flow = write_flows(tmp_path, replies, defaults=", max_rounds: 2")
    run = Stored(tmp_path, flow)
    state = await run.runner().start()
    events = run.events()
    assert state.status == "terminated"
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.is_error for r in results] == [False, True]
    assert "has reached its max_rounds" in results[1].content
    assert len(started(events)) == 1 and len(deliveries(events)) == 1
    said = [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "boss"]
    assert said == ["started", "fine, done"]


async def test_a_fork_does_not_continue_its_origins_unfinished_child(tmp_path: Path) -> None:
    replies = [f"{{tool_calls: [{call('slow', 'owls')}]}}", "started", "{echo: last}"]
    run = Stored(tmp_path, write_flows(tmp_path, replies))
    await stop_while_waiting(run.runner())
    (task,) = started(run.events())
    child = run.child(task.child_run)
    store = open_store(run.db)
    fork = store.fork("parent-run", len(run.events()), "fork-run")
    state = await Runner(flow=run.flow, log=fork, child_log=run.children).retry()
    (delivered,) = deliveries(fork.load())
    assert state.status == "paused"
    assert delivered.background is not None and delivered.background.status == "failed"
    assert f"the child run {task.child_run} of background task bg-1 did not finish" in (
        delivered.content
    )
    assert run.child(task.child_run) == child  # the origin's child is left as it was


# ---------------------------------------------------------------------------- the tasks alone


class Done:
    """A child run's outcome."""

    def __init__(self, content: str, is_error: bool = False) -> None:
        self.content = content
        self.is_error = is_error


def task(name: str) -> BackgroundEvent:
    return BackgroundEvent(
        seq=1, run="r", ts="t", task=name, agent="a", to="b", tool="echo", call="c", child_run="k"
    )


def test_the_caps_refuse_a_task_only_once_they_are_reached() -> None:
    assert over_cap(1, 0, "a", flow_cap=2, agent_cap=None) is None
    assert "max_background 2" in (over_cap(2, 0, "a", flow_cap=2, agent_cap=None) or "")
    assert over_cap(1, 1, "a", flow_cap=5, agent_cap=2) is None
    assert "a has 2 background tasks" in (over_cap(2, 2, "a", flow_cap=5, agent_cap=2) or "")


def test_a_new_task_id_follows_those_the_log_shows_started() -> None:
    seen = [2]  # the run's log shows bg-1 and bg-2, started by another process
    tasks = BackgroundTasks(lambda event: asyncio.sleep(0), lambda: seen[0])
    assert tasks.new_id() == "bg-3"
    assert tasks.new_id() == "bg-4"  # the log does not show bg-3 yet: still counted


async def test_an_open_task_is_resumed_once_and_a_crash_is_delivered_as_failed() -> None:
    resumed: list[str] = []
    gate = asyncio.Event()

    async def resume(event: BackgroundEvent) -> Done:
        resumed.append(event.task)
        await gate.wait()
        if event.task == "bg-2":
            raise RuntimeError("the child's flow is gone")
        return Done("all done")

    tasks = BackgroundTasks(resume, lambda: 2)
    open_tasks = [task("bg-1"), task("bg-2")]
    tasks.revive(open_tasks)
    tasks.revive(open_tasks)  # a second point of rest: the tasks run already
    await asyncio.sleep(0)
    gate.set()
    first = await tasks.next_finished(open_tasks)
    second = await tasks.next_finished(open_tasks[1:])
    assert resumed == ["bg-1", "bg-2"]
    assert (first.task.task, first.content, first.is_error) == ("bg-1", "all done", False)
    assert second.task.task == "bg-2" and second.is_error
    assert "the child's flow is gone" in second.content


def test_a_task_with_no_delivery_yet_is_listed_as_running() -> None:
    rows = task_rows([task("bg-1"), task("bg-2")])
    assert [(row.task, row.status) for row in rows] == [("bg-1", "running"), ("bg-2", "running")]
