"""A replay's providers answer each call with the recorded one: no model is called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine.replay import replay_run
from roost.events import MessageEvent
from tests.engine.conftest import CHAT, flow_from, record_chat

if TYPE_CHECKING:
    from pathlib import Path


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
