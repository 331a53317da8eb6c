"""The CLI's run logs: new runs are stored, runs are found by id, prefix or file."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.cli.logs import new_run_log, open_run
from roost.errors import RunNotFoundError
from roost.events import MessageEvent
from roost.flow.models import Flow


def message(seq: int, run: str) -> MessageEvent:
    return MessageEvent.model_validate(
        {
            "seq": seq,
            "run": run,
            "ts": "2026-01-01T00:00:00Z",
            "from": "a",
            "to": "b",
            "content": "hi",
        }
    )


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    return tmp_path


def test_events_path_gets_a_copy_of_every_batch(in_tmp: Path) -> None:
    flow = Flow.model_validate({"roost": 1, "name": "f", "agents": {"a": {}}})
    log = new_run_log(flow, events_path=in_tmp / "copy.jsonl", db=None)
    log.append([message(0, log.run_id)])
    log.append([message(1, log.run_id)])
    assert len(log.load()) == 2
    assert len((in_tmp / "copy.jsonl").read_text().splitlines()) == 2


def test_unknown_run_id_is_run_not_found(in_tmp: Path) -> None:
    with pytest.raises(RunNotFoundError, match="no run 'nope'"):
        open_run("nope", db=None)


def test_missing_event_file_is_run_not_found(in_tmp: Path) -> None:
    with pytest.raises(RunNotFoundError, match=r"missing\.jsonl"):
        open_run("missing.jsonl", db=None)
