"""A run is advanced by one process at a time: a second writer gets a clear error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.errors import ConcurrentRunError
from roost.flow import load_flow_text
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: pair
defaults: {provider: mock, max_rounds: 6}
providers:
  mock: {kind: scripted, replies: ["one", "INTERRUPT", "two", "three", "four"]}
agents:
  a: {}
  b: {}
start: {from: a, to: b, content: hello}
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlStore:
    url = (
        str(tmp_path / "roost.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    return SqlStore(url)


async def test_two_continues_of_one_run_never_interleave(store: SqlStore, tmp_path: Path) -> None:
    flow = load_flow_text(FLOW, str(tmp_path / "pair.yaml"))
    await Runner(flow=flow, log=store.new_log("r")).start()
    assert store.run("r").status == "paused"
    # Two processes open the paused run; both see the same state.
    first = Runner(flow=flow, log=SqlStore(store.url).log("r"))
    second = Runner(flow=flow, log=SqlStore(store.url).log("r"))
    await first.continue_("from the first")
    with pytest.raises(ConcurrentRunError, match="another process"):
        await second.continue_("from the second")
    events = store.log("r").load()
    assert [e.seq for e in events] == list(range(len(events)))
    assert not any(getattr(e, "content", "") == "from the second" for e in events)
    assert store.run("r").next_seq == len(events)
