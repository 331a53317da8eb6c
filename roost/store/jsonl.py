"""A run's event log as a JSON Lines file, one event a line.

Each ``append`` hands the step's events to the operating system in one
``write`` on a descriptor kept open for the log's lifetime (opened with
``O_APPEND`` at the first append): a killed process loses at most the line it
was writing, since the data is in the kernel's page cache as soon as
``write`` returns. There is no ``fsync``: the log survives the process being
killed, not the machine losing power. Loading ignores such a torn last line
(and says so in ``warnings``); an invalid line anywhere else is an error that
names the file and line. A last line that is a whole event but lacks its
newline (left off by an editor or a script) is an event like any other: the
next append writes the newline before its own lines.

Every append takes an exclusive ``flock`` for the length of its write and
checks, with one ``lseek`` to its end, that the file has not grown behind this log's
back; the next expected seq is kept in memory, so the file is re-read only
when another writer did append. Two processes (or two logs in one process)
never interleave a run. ``close()`` gives the descriptor back; a log that is
simply dropped closes it when it is collected.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from roost.errors import ConcurrentRunError, EventLogError, EventLogWriteError
from roost.events import Event, parse_event
from roost.store.checks import event_bytes, invalid_event_text, order_problem

if TYPE_CHECKING:
    from collections.abc import Sequence


class JsonlLog:
    """EventLog over a JSON Lines file; the file is created on the first append."""

    def __init__(self, path: str | Path, run_id: str | None = None) -> None:
        self.path = Path(path)
        self.warnings: list[str] = []
        self._run_id = run_id
        self._size = -1  # bytes of the file this log has accounted for (-1: not read yet)
        self._valid_end = 0  # end of the last complete, valid line
        self._next_seq = 0
        self._fd = -1  # the descriptor appends write to, opened by the first append
        self._unterminated = False  # the file's last event lacks its newline

    def close(self) -> None:
        """Closes the file descriptor (a later append opens it again)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        # A raw descriptor, so dropping the log closes it without a ResourceWarning.
        if getattr(self, "_fd", -1) >= 0:
            os.close(self._fd)

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
            fd = self._fd if self._fd >= 0 else self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                self._append_locked(fd, events)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as exc:
            raise EventLogWriteError(f"{self.path}: cannot write: {exc.strerror}") from exc

    # ------------------------------------------------------------------ internals

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        return self._fd

    def _append_locked(self, fd: int, events: Sequence[Event]) -> None:
        # The file's size as seen through the lock (lseek: fstat builds a whole stat record).
        size = os.lseek(fd, 0, os.SEEK_END)
        if size != self._size:
            # Someone (another process, or a crash) changed the file since we last saw it.
            self.load()
        if size > self._valid_end:
            # A torn last line from a killed writer: cut it so the next line starts clean.
            os.ftruncate(fd, self._valid_end)
            self._size = self._valid_end
        run_id = self._run_id or events[0].run
        expected = self._next_seq
        for event in events:
            if event.seq != expected:
                raise ConcurrentRunError(
                    f"run {run_id}: event seq {event.seq} is not the next ({expected}); "
                    "another process may be advancing this run"
                )
            if problem := order_problem(event, expected, run_id):
                raise EventLogError(f"{self.path}: {problem}")
            expected += 1
        payload = b"".join([_line(event) for event in events])
        if self._unterminated:
            payload = b"\n" + payload  # or the first new event would join the last line
        _write_all(fd, payload)
        self._unterminated = False
        self._run_id = run_id
        self._size += len(payload)
        self._valid_end = self._size
        self._next_seq = expected

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
            try:
                event = _parse_line(raw, len(events), self._run_id)
            except _NotJson as exc:
                if data[end:].strip():
                    raise EventLogError(f"{self.path}:{lineno}: {exc}") from exc
                self.warnings.append(f"{self.path}:{lineno}: ignored a torn last line ({exc})")
                break
            except EventLogError as exc:
                # Whole JSON that is no event this roost knows (a newer version's type,
                # say) is not a torn write: refuse the log rather than cut it off.
                raise EventLogError(f"{self.path}:{lineno}: {exc}") from exc
            events.append(event)
            self._run_id = event.run
            valid_end = end
        self._size = len(data)
        self._valid_end = valid_end
        # A whole event on a last line without its newline (an editor or a script left it
        # off): it is kept, and the next append writes the newline first.
        self._unterminated = 0 < valid_end == len(data) and not data.endswith(b"\n")
        self._next_seq = len(events)
        return events


def _line(event: Event) -> bytes:
    return event_bytes(event) + b"\n"


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


class _NotJson(EventLogError):
    """A line that is not a JSON object: what a write cut short leaves."""


def _parse_line(raw: bytes, expected_seq: int, run_id: str | None) -> Event:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, huge numbers
        raise _NotJson(f"not JSON: {_short(exc)}") from exc
    if not isinstance(data, dict):
        raise _NotJson("not a JSON object")
    if _SURROGATE_ESCAPE.search(raw) and not _is_text(data):
        raise EventLogError(
            "invalid event: a \\u escape names half of a UTF-16 surrogate pair, which is no text"
        )
    try:
        event = parse_event(data)
    except ValidationError as exc:
        raise EventLogError(invalid_event_text(exc)) from exc
    if problem := order_problem(event, expected_seq, run_id):
        raise EventLogError(problem)
    return event


# JSON may spell half of a surrogate pair alone (``"\\ud800"``); Python reads it into a str
# that no file, database or terminal can write, so such a line is no event (roost never
# writes one: its texts are made valid before they are logged).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _is_text(data: object) -> bool:
    """True when every string in ``data`` can be written as UTF-8."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return False
    return True


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."
