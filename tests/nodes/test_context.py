"""An agent's context files: read again at every reply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, pair

if TYPE_CHECKING:
    from pathlib import Path


async def test_context_files_are_read_again_at_every_reply(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("first version")
    text = pair("[{echo: last}, more, {echo: last}, TERMINATE]").replace(
        "{role: You help.}", "{role: You help., context: [notes/*.md]}"
    )
    flow = make_flow(text, tmp_path / "flow.yaml")
    log = MemoryLog("r")
    seen: list[str] = []

    def edit(event: object) -> None:
        if getattr(event, "type", "") == "message" and getattr(event, "from_", "") == "assistant":
            seen.append(event.content)  # type: ignore[attr-defined]
            (notes / "a.md").write_text("second version")

    await Runner(flow=flow, log=log, on_event=edit).start()
    assert "Hi" in seen[0] and "first version" in seen[0] and "notes/a.md" in seen[0]
    assert "second version" in seen[1] and "more" in seen[1]
