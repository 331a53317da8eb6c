"""The CLI's run logs: new runs are stored, runs are found by id, prefix or file."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.cli.logs import new_run_log, open_run
from roost.errors import RunNotFoundError
from roost.flow.models import Flow
from roost.store.jsonl import JsonlLog

from .conftest import run_events

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    return tmp_path


def test_events_path_gets_a_copy_of_every_batch(in_tmp: Path) -> None:
    flow = Flow.model_validate({"roost": 1, "name": "f", "agents": {"a": {}}})
    log = new_run_log(flow, events_path=in_tmp / "copy.jsonl", db=None)
    events = run_events(log.run_id, 3)
    log.append(events[:2])
    log.append(events[2:])
    assert log.load() == events
    assert JsonlLog(in_tmp / "copy.jsonl").load() == events


def test_unknown_run_id_is_run_not_found(in_tmp: Path) -> None:
    with pytest.raises(RunNotFoundError, match="no run"):
        open_run("nope", db=None)


def test_missing_event_file_is_run_not_found(in_tmp: Path) -> None:
    with pytest.raises(RunNotFoundError, match=r"missing\.jsonl"):
        open_run("missing.jsonl", db=None)


def test_missing_store_is_not_created_by_a_lookup(in_tmp: Path) -> None:
    with pytest.raises(RunNotFoundError):
        open_run("abc", db=None)
    assert not (in_tmp / ".roost" / "roost.db").exists()


def test_stored_run_found_by_unique_prefix(in_tmp: Path) -> None:
    flow = Flow.model_validate({"roost": 1, "name": "f", "agents": {"a": {}}})
    log = new_run_log(flow, events_path=None, db=None)
    log.append(run_events(log.run_id, 2))
    found, _ = _open_log_only(log.run_id[:-2])
    assert found.run_id == log.run_id


def _open_log_only(ref: str) -> tuple[object, None]:
    from roost.cli.logs import open_store

    store = open_store(None, create=False)
    return store.log(store.find(ref)), None
