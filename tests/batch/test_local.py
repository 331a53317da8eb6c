"""Rows run in this process: ``--concurrency N`` runs N rows at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.batch.conftest import Roost, jsonl, results

if TYPE_CHECKING:
    from pathlib import Path

# Each row's bot calls meet, which waits (at most a few seconds) until ROWS rows are in it
# at once: with --concurrency ROWS they all meet; one row at a time, each waits alone.
BARRIER_PY = '''\
import asyncio
import uuid
from pathlib import Path

ROWS = 3


async def meet() -> str:
    """Marks this row as arrived, then waits for the others to arrive too."""
    hall = Path(__file__).parent / "hall"
    hall.mkdir(exist_ok=True)
    (hall / uuid.uuid4().hex).touch()
    for _ in range(300):  # a bound: a row never waits for ever
        if len(list(hall.iterdir())) >= ROWS:
            return "met"
        await asyncio.sleep(0.01)
    return "alone"
'''


MEET = """\
roost: 1
name: meet
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{tool_calls: [{name: meet, arguments: {}}]}, {echo: last}]}
tools:
  meet: {python: "barrier:meet", description: Wait for the other rows.}
agents:
  USER: {interrupt: ALWAYS}
  bot: {role: You meet the others., functions: [meet]}
start: {from: USER, to: bot, content: Meet the others.}
"""


def test_concurrency_n_runs_n_rows_at_once(folder: Path, roost: Roost) -> None:
    (folder / "barrier.py").write_text(BARRIER_PY)
    (folder / "meet.yaml").write_text(MEET)
    jsonl(folder / "q.jsonl", {"message": "a"}, {"message": "b"}, {"message": "c"})
    code, out, err = roost("batch", "meet.yaml", "q.jsonl", "--concurrency", "3")
    assert code == 0, out + err
    assert [r["final"] for r in results(folder / "q.jsonl.results.jsonl")] == ["met"] * 3
