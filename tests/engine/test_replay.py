"""Replay: a run re-executed against its recorded answers is identical, edits show up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import first_difference, replay_run
from roost.events import Event, LlmCallEvent, MessageEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow

CHAT = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 8}
providers:
  mock:
    kind: scripted
    replies: ["one", "two", "INTERRUPT", "three", {error: boom}, "four", "five"]
agents:
  writer: {role: "You write. {{ vars.tone }}"}
  critic: {role: You criticise.}
vars: {tone: calm}
start: {from: critic, to: writer, content: Write a poem}
"""

TOOLS_MODULE = '''
def add(a: int, b: int) -> int:
    """Adds."""
    return a + b
'''

TOOLS = """\
roost: 1
name: calc
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: add, arguments: {a: 2, b: 3}}, {name: add, arguments: {a: 1, b: 1}}]}
      - "TERMINATE"
tools:
  add: {python: "replay_tools:add", description: Add two integers}
agents:
  user: {}
  calc: {functions: [add]}
start: {from: user, to: calc, content: add things}
"""


def flow_from(text: str, folder: Path, name: str = "flow.yaml") -> Flow:
    path = folder / name
    path.write_text(text)
    return load_flow_text(text, str(path))


async def record_chat(flow: Flow) -> list[Event]:
    """A run with a person's answer, an error and a retry."""
    log = MemoryLog("rec")
    runner = Runner(flow=flow, log=log)
    state = await runner.start()
    assert state.status == "paused"
    state = await runner.continue_("shorter please")
    assert state.status == "error"
    state = await runner.retry()
    assert state.status == "terminated"
    return log.load()


async def test_replay_of_an_unchanged_flow_is_identical(tmp_path: Path) -> None:
    flow = flow_from(CHAT, tmp_path)
    recorded = await record_chat(flow)
    report = await replay_run(flow, recorded)
    assert report.identical, report.difference
    assert report.compared == len(recorded)
    assert [e.seq for e in report.events] == [e.seq for e in recorded]


async def test_an_edited_role_changes_the_first_request(tmp_path: Path) -> None:
    recorded = await record_chat(flow_from(CHAT, tmp_path))
    edited = flow_from(CHAT.replace("tone: calm", "tone: angry"), tmp_path, "edited.yaml")
    report = await replay_run(edited, recorded)
    assert report.difference is not None
    old, new = report.difference.recorded, report.difference.replayed
    assert isinstance(old, LlmCallEvent) and isinstance(new, LlmCallEvent)
    assert old.request_digest != new.request_digest
    assert old.seq == 2 and old.node == "writer"


async def test_replay_never_calls_a_model(tmp_path: Path) -> None:
    recorded = await record_chat(flow_from(CHAT, tmp_path))
    # The same flow, but its provider would now need a real API (and has no key).
    live = CHAT.replace(
        "    kind: scripted\n    replies:",
        "    kind: openai\n    model: gpt-x\n    base_url: http://127.0.0.1:9\n    x:",
    )
    live = "\n".join(line for line in live.splitlines() if not line.startswith("    x:"))
    report = await replay_run(flow_from(live, tmp_path, "live.yaml"), recorded)
    # Another model asked is another request (the digests differ), but none was called:
    # every recorded answer came back and no call failed.
    assert [e.type for e in report.events] == [e.type for e in recorded]
    said = [(e.from_, e.content) for e in recorded if isinstance(e, MessageEvent)]
    assert [(e.from_, e.content) for e in report.events if isinstance(e, MessageEvent)] == said


async def test_until_compares_a_prefix(tmp_path: Path) -> None:
    flow = flow_from(CHAT, tmp_path)
    recorded = await record_chat(flow)
    changed = [
        e.model_copy(update={"content": "changed"}) if isinstance(e, MessageEvent) and e.seq > 8
        else e
        for e in recorded
    ]  # fmt: skip
    assert not (await replay_run(flow, changed)).identical
    report = await replay_run(flow, changed, until=8)
    assert report.identical and report.compared == 9


async def test_a_recorded_run_that_went_further_differs_in_length(tmp_path: Path) -> None:
    flow = flow_from(CHAT, tmp_path)
    recorded = await record_chat(flow)
    shorter = flow_from(CHAT.replace("max_rounds: 8", "max_rounds: 1"), tmp_path, "short.yaml")
    report = await replay_run(shorter, recorded)
    assert report.difference is not None
    assert report.difference.index < len(recorded)


async def test_tools_answer_from_the_record(tmp_path: Path) -> None:
    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE)
    flow = flow_from(TOOLS, tmp_path)
    log = MemoryLog("rec")
    await Runner(flow=flow, log=log).start()
    recorded = log.load()
    assert any(e.type == "tool_result" and e.content == "5" for e in recorded)  # type: ignore[union-attr]
    # The tool now gives other answers: a replay still uses the recorded ones...
    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE.replace("a + b", "a * b"))
    report = await replay_run(flow, recorded)
    assert report.identical, report.difference


def test_first_difference_ignores_run_and_time(tmp_path: Path) -> None:
    a = MessageEvent.model_validate(
        {"seq": 1, "run": "x", "ts": "1", "from": "a", "to": "b", "content": "c"}
    )
    b = a.model_copy(update={"run": "y", "ts": "2"})
    assert first_difference([a], [b]) is None
    diff = first_difference([a], [b, b])
    assert diff is not None and diff.index == 1 and diff.recorded is None


async def test_a_run_resumed_after_its_process_died_replays_identically(tmp_path: Path) -> None:
    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE)
    flow = flow_from(TOOLS, tmp_path)
    whole = MemoryLog("rec")
    await Runner(flow=flow, log=whole).start()
    events = whole.load()
    # The process died after recording the tool calls, before their results.
    cut = next(i for i, e in enumerate(events) if e.type == "tool_call") + 2
    survivor = MemoryLog("rec", events[:cut])
    state = await Runner(flow=flow, log=survivor).retry()
    assert state.status == "terminated"
    resumed = survivor.load()
    assert any(e.type == "retry" for e in resumed)
    report = await replay_run(flow, resumed)
    assert report.identical, report.difference


CYCLE = """\
roost: 1
name: cycle
defaults: {provider: mock, max_rounds: 6}
providers:
  mock:
    kind: scripted
    when_exhausted: cycle
    replies:
      - tool_calls:
          - {id: c1, name: add, arguments: {a: 1, b: 1}}
          - {id: c2, name: add, arguments: {a: 2, b: 2}}
      - "a reply"
tools:
  add: {python: "replay_tools:add", description: Add two integers}
agents:
  a: {functions: [add]}
  b: {functions: [add]}
start: {from: a, to: b, content: go}
"""


async def test_a_run_stopped_at_any_event_and_retried_replays_identically(tmp_path: Path) -> None:
    """Every step boundary (a process killed there, or a fork made there), resumed, replayed."""
    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE)
    flow = flow_from(CYCLE, tmp_path)
    whole = MemoryLog("rec")
    await Runner(flow=flow, log=whole).start()
    events = whole.load()
    resumed = 0
    for cut in range(2, len(events)):
        if events[cut].ts == events[cut - 1].ts:
            continue  # inside a step: no process stops there, and forks refuse it
        log = MemoryLog("rec", events[:cut])
        runner = Runner(flow=flow, log=log)
        if runner.state.status not in ("running", "error"):
            continue
        await runner.retry()
        report = await replay_run(flow, log.load())
        assert report.identical, (cut, report.difference)
        resumed += 1
    assert resumed > 10


async def test_live_tools_run_the_current_tools(tmp_path: Path) -> None:
    from roost.tools import toolbox_for

    (tmp_path / "replay_tools.py").write_text(TOOLS_MODULE)
    flow = flow_from(TOOLS, tmp_path)
    log = MemoryLog("rec")
    await Runner(flow=flow, log=log).start()
    recorded = log.load()
    # The tool's new version (another module, as one module is imported once a process).
    (tmp_path / "replay_tools_v2.py").write_text(TOOLS_MODULE.replace("a + b", "a * b"))
    live = flow_from(TOOLS.replace("replay_tools:", "replay_tools_v2:"), tmp_path, "live.yaml")
    report = await replay_run(live, recorded, live_tools=toolbox_for(live))
    assert report.difference is not None
    changed = report.difference.replayed
    assert changed is not None and changed.type == "tool_result"
    assert changed.content == "6"  # type: ignore[union-attr]  # 2 * 3, where 2 + 3 was recorded
