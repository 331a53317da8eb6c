"""Replay: a run re-executed against its recorded answers is identical, edits show up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.engine.replay import first_difference, replay_run
from roost.events import LlmCallEvent, MessageEvent
from roost.ports import MemoryLog
from tests.engine.conftest import CHAT, TOOLS, TOOLS_MODULE, flow_from, record_chat

if TYPE_CHECKING:
    from pathlib import Path


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
