"""Where the CLI keeps runs: a new run's log, and a stored run found by id or file.

Every run is stored (under ``.roost/`` of the current folder unless ``--db`` or
``ROOST_DB`` says otherwise); ``--events PATH`` writes a JSON Lines copy as
well. A run reference is a stored run's id (or a unique prefix of it) or the
path of a run's JSON Lines file.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import EventLogError, RunNotFoundError
from roost.eventlog import EventLog
from roost.events import Event, RunStartEvent
from roost.store.jsonl import JsonlLog

if TYPE_CHECKING:
    from roost.flow.models import Flow

RUNS_DIR = Path(".roost") / "runs"


def new_run_id() -> str:
    """A short, time-sortable run id such as ``20261130-144110-3f9a2c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


def new_run_log(flow: Flow, *, events_path: Path | None, db: str | None) -> EventLog:
    """The log a new run of ``flow`` is written to: the store, plus ``events_path`` if given."""
    run_id = new_run_id()
    stored = JsonlLog(RUNS_DIR / f"{run_id}.jsonl", run_id)
    if events_path is None:
        return stored
    return TeeLog(stored, [JsonlLog(events_path, run_id)])


def open_run(ref: str, *, db: str | None) -> tuple[EventLog, Flow]:
    """The log of the run ``ref`` names and its flow, rebuilt from the run_start event."""
    log = _find_log(ref)
    events = log.load()
    return log, flow_of(events, ref)


def flow_of(events: list[Event], ref: str) -> Flow:
    """The flow a run was started with, loaded again from its recorded text."""
    from roost.flow import load_flow_text  # type: ignore[attr-defined]

    if not events or not isinstance(events[0], RunStartEvent):
        raise EventLogError(f"{ref}: the run has no run_start event")
    record = events[0].flow
    flow: Flow = load_flow_text(record.text, record.path)
    return flow


def _find_log(ref: str) -> JsonlLog:
    path = Path(ref)
    if ref.endswith(".jsonl") or path.is_file():
        if not path.is_file():
            raise RunNotFoundError(f"{ref}: no such event file")
        log = JsonlLog(path)
        if not log.load():
            raise RunNotFoundError(f"{ref}: the event file holds no run")
        return log
    stored = RUNS_DIR / f"{ref}.jsonl"
    if stored.is_file():
        return JsonlLog(stored, ref)
    matches = sorted(RUNS_DIR.glob(f"{ref}*.jsonl")) if ref else []
    if len(matches) == 1:
        return JsonlLog(matches[0], matches[0].stem)
    raise RunNotFoundError(f"no run {ref!r}")


class TeeLog:
    """A log that appends to a primary log and copies every batch to others."""

    def __init__(self, primary: EventLog, copies: list[EventLog]) -> None:
        self.primary = primary
        self.copies = copies

    @property
    def run_id(self) -> str:
        return self.primary.run_id

    def load(self) -> list[Event]:
        return self.primary.load()

    def append(self, events: Sequence[Event]) -> None:
        self.primary.append(events)
        for copy in self.copies:
            copy.append(events)
