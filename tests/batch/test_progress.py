"""The batch's progress bar shows the calls waiting for a provider's limits while they wait."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from fakes.gauged import GaugedLLMServer
from fakes.script import Reply
from rich.progress import Progress

import roost.api
from roost.batch.progress import FailedColumn
from roost.ports import MemoryLog, new_run_id
from roost.providers import limits

if TYPE_CHECKING:
    from pathlib import Path

CAPPED = """
roost: 1
name: capped
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: k, max_retries: 0,
         max_concurrency: 1}}
defaults: {{provider: llm}}
agents:
  USER: {{role: A person.}}
  bot: {{role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def shown(column: FailedColumn, progress: Progress) -> str:
    return column.render(progress.tasks[0]).plain


async def test_the_bar_counts_the_calls_waiting_for_their_turn(tmp_path: Path) -> None:
    progress = Progress(FailedColumn())
    progress.add_task("b1", total=3, failed="0")
    column = FailedColumn()
    assert shown(column, progress) == "0 failed"  # nothing waits: nothing said
    with GaugedLLMServer(delay=0.5, responder=lambda _: Reply(text="Done. TERMINATE")) as llm:
        flow = tmp_path / "capped.yaml"
        flow.write_text(CAPPED.format(url=llm.url), encoding="utf-8")
        runs = asyncio.gather(*(roost.api.run(flow, log=MemoryLog(new_run_id())) for _ in range(3)))
        seen = set()
        while not runs.done():
            seen.add(shown(column, progress))
            await asyncio.wait({runs}, timeout=0.05)
        await runs
    assert "0 failed 2 waiting for limits" in seen  # one call held the only turn
    assert "0 failed 1 waiting for limits" in seen
    assert sum(limits.waiting.values()) == 0 and shown(column, progress) == "0 failed"
