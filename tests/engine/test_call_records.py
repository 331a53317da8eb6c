"""An ``llm_call``'s response, usage and attempts are typed records, written as before.

The logs in ``data/`` were written by roost when these fields were plain
dictionaries. They load, are written back byte for byte, and replaying them
records the same JSON; a run made again writes what it wrote then.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from roost import load_flow
from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import (
    Event,
    event_json,
    parse_event,
)
from roost.ports import MemoryLog

DATA = Path(__file__).parent / "data"
LOGS = ["fallback_run.jsonl", "channel_run.jsonl"]
FLOWS = Path(__file__).resolve().parents[2] / "flows"


def lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


def without_place(event: Event) -> dict[str, object]:
    """The event's JSON without the fields that say where and when it was written."""
    data = json.loads(event_json(event))
    for key in ("run", "ts"):
        data.pop(key)
    return data


@pytest.mark.parametrize("name", LOGS)
def test_replaying_an_old_log_records_the_same_json(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fallback run's flow reads these; the replay calls no model.
    monkeypatch.setenv("FAKE_LLM_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-key")
    recorded = [parse_event(line) for line in lines(name)]
    report = asyncio.run(replay_run(None, recorded))
    assert report.identical, report.difference
    assert [event_json(e) for e in report.events] == lines(name)


def test_a_run_made_again_writes_what_it_wrote_before() -> None:
    old = [parse_event(line) for line in lines("channel_run.jsonl")]
    log = MemoryLog("again")
    runner = Runner(flow=load_flow(FLOWS / "math-chat.yaml"), log=log)
    state = asyncio.run(runner.start())
    assert state.status == "paused"
    asyncio.run(runner.continue_("Thank you, that is all."))
    new = log.load()
    # The digest's form changed on purpose since the log was written (it now covers the
    # request as sent); every other field must be written exactly as before.
    assert all(e.request_digest.startswith("sha256:2:") for e in new if e.type == "llm_call")
    assert [undigested(e) for e in new][1:] == [undigested(e) for e in old][1:]


def undigested(event: Event) -> dict[str, object]:
    """The event as ``without_place`` gives it, less a model call's request digest."""
    data = without_place(event)
    data.pop("request_digest", None)
    return data
