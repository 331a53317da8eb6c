"""A run's event log as a JSON Lines file, one event a line.

Each ``append`` writes the step's events in one ``write`` and flushes it to
the operating system, so a killed process loses at most the line it was
writing. Loading ignores such a torn last line (and says so in ``warnings``);
an invalid line anywhere else is an error that names the file and line.
Appends take an exclusive ``flock`` on the file and check that the file has
not grown behind this log's back, so two processes never interleave a run.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from roost.errors import ConcurrentRunError, EventLogError
from roost.events import Event, event_json, parse_event


class JsonlLog:
    """EventLog over a JSON Lines file; the file is created on the first append."""

    def __init__(self, path: str | Path, run_id: str | None = None) -> None:
        self.path = Path(path)
        self.warnings: list[str] = []
        self._run_id = run_id
        self._size = -1  # bytes of the file this log has accounted for (-1: not read yet)
        self._valid_end = 0  # end of the last complete, valid line
        self._next_seq = 0

    @property
    def run_id(self) -> str:
        if self._run_id is None:
            self.load()
        if self._run_id is None:
            raise EventLogError(f"{self.path}: no events, so no run id; give one")
        return self._run_id

    def load(self) -> list[Event]:
        """Every complete event of the file, in seq order."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError as exc:
            raise EventLogError(f"{self.path}: cannot read: {exc.strerror}") from exc
        return self._parse(data)

    def append(self, events: Sequence[Event]) -> None:
        """Writes one step's events and flushes them; ConcurrentRunError if a seq is taken."""
        if not events:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                try:
                    self._append_locked(handle, events)
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        except OSError as exc:
            raise EventLogError(f"{self.path}: cannot write: {exc.strerror}") from exc

    # ------------------------------------------------------------------ internals

    def _append_locked(self, handle: IO[bytes], events: Sequence[Event]) -> None:
        size = os.fstat(handle.fileno()).st_size
        if size != self._size:
            # Someone (another process, or a crash) changed the file since we last saw it.
            self.load()
        if size > self._valid_end:
            # A torn last line from a killed writer: cut it so the next line starts clean.
            os.truncate(self.path, self._valid_end)
            self._size = self._valid_end
        run_id = self._run_id or events[0].run
        for offset, event in enumerate(events):
            expected = self._next_seq + offset
            if event.seq != expected:
                raise ConcurrentRunError(
                    f"run {run_id}: event seq {event.seq} is not the next ({expected}); "
                    "another process may be advancing this run"
                )
            if event.run != run_id:
                raise EventLogError(f"{self.path}: event of run {event.run} in run {run_id}")
        payload = "".join(event_json(event) + "\n" for event in events).encode()
        handle.write(payload)
        handle.flush()
        self._run_id = run_id
        self._size += len(payload)
        self._valid_end = self._size
        self._next_seq += len(events)

    def _parse(self, data: bytes) -> list[Event]:
        self.warnings = []
        events: list[Event] = []
        valid_end = position = lineno = 0
        while position < len(data):
            newline = data.find(b"\n", position)
            end = newline + 1 if newline != -1 else len(data)
            raw, position, lineno = data[position:end], end, lineno + 1
            if not raw.strip():
                valid_end = end if newline != -1 else valid_end
                continue
            if newline == -1:
                self.warnings.append(f"{self.path}:{lineno}: ignored an unterminated last line")
                break
            try:
                event = _parse_line(raw, len(events), self._run_id)
            except EventLogError as exc:
                if data[end:].strip():
                    raise EventLogError(f"{self.path}:{lineno}: {exc}") from exc
                self.warnings.append(f"{self.path}:{lineno}: ignored a torn last line ({exc})")
                break
            events.append(event)
            self._run_id = event.run
            valid_end = end
        self._size = len(data)
        self._valid_end = valid_end
        self._next_seq = len(events)
        return events


def _parse_line(raw: bytes, expected_seq: int, run_id: str | None) -> Event:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EventLogError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EventLogError("not a JSON object")
    try:
        event = parse_event(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise EventLogError(f"invalid event: {where}: {first['msg']}") from exc
    if event.seq != expected_seq:
        raise EventLogError(f"event seq {event.seq} where {expected_seq} was expected")
    if run_id is not None and event.run != run_id:
        raise EventLogError(f"event of run {event.run!r} in the log of run {run_id!r}")
    return event
