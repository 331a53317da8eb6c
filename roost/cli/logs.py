"""Where the CLI keeps runs: a new run's log, and a stored run found by id or file.

Every run is stored in the SQL store (``.roost/roost.db`` in the nearest folder,
from the current one up, that has a ``.roost`` folder, unless ``--db`` or
``ROOST_DB`` names another database); ``--events PATH`` writes a JSON Lines
copy as well. A run reference is a stored run's id
(or a unique prefix of it) or the path of a run's JSON Lines file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import EventLogError, RunNotFoundError, StoreError, UsageError
from roost.events import Event
from roost.ports import EventLog, new_run_id
from roost.store.checks import first_difference
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore
from roost.store.sqllog import SqlLog
from roost.store.tee import TeeLog

if TYPE_CHECKING:
    from roost.flow.models import Flow

__all__ = [
    "TeeLog",
    "file_log",
    "is_file_ref",
    "new_run_id",
    "new_run_log",
    "open_log",
    "open_run",
    "open_store",
    "stored_copy",
]


def open_store(db: str | None, *, create: bool = True) -> SqlStore:
    """The run store named by ``db``, ``ROOST_DB`` or the default SQLite file.

    With ``create=False`` a missing SQLite file is RunNotFoundError, not a new file.
    """
    return SqlStore(db, create=create)


def new_run_log(flow: Flow, *, events_path: Path | None, db: str | None) -> EventLog:
    """The log a new run of ``flow`` is written to: the store, plus ``events_path`` if given."""
    if events_path is not None:
        check_events_path(events_path)  # before anything is stored: bad use, not a run
    run_id = new_run_id()
    stored = open_store(db).new_log(run_id)
    if events_path is None:
        return stored
    if events_path.exists() and events_path.is_file():
        events_path.unlink()  # a new run replaces an old file, as an output option does
    return TeeLog(stored, [JsonlLog(events_path, run_id)])


def check_events_path(path: Path) -> None:
    """UsageError unless a new events file can be written at ``path``; its folder is made
    when missing (``--events recordings/x.jsonl`` beside a test file)."""
    if path.is_dir():
        raise UsageError(f"{path}: is a directory; --events needs a file path")
    if path.exists() and not path.is_file():
        raise UsageError(f"{path}: not a regular file (a device or a pipe); --events needs a file")
    folder = path.parent
    if not folder.is_dir():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a file in the way, no permission, a read-only disk
            reason = error.strerror or type(error).__name__
            raise UsageError(f"{path}: cannot make the folder {str(folder)!r}: {reason}") from None
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{path}: cannot write here (permission denied)")


def open_run(ref: str, *, db: str | None) -> tuple[EventLog, Flow]:
    """The log of the run ``ref`` names and the flow it follows, rebuilt from its events."""
    from roost.engine.flows import flow_in_log

    log = open_log(ref, db=db)
    return log, flow_in_log(log.load(), ref)


def open_log(ref: str, *, db: str | None) -> EventLog:
    """The log of the run ``ref`` names (a stored run, or a file and its stored copy)."""
    if is_file_ref(ref):
        return _with_stored_copy(file_log(ref), db)
    store = open_store(db, create=False)
    return store.log(store.find(ref))


def _with_stored_copy(file: JsonlLog, db: str | None) -> EventLog:
    """The file's log, also appending to the store when the store holds the same run.

    A run started with ``--events`` lives in the store and in the file; continuing it
    through the file must not leave the stored copy behind.
    """
    stored = stored_copy(file.path, file.load(), db)
    return TeeLog(file, [stored]) if stored is not None else file


def stored_copy(path: Path, events: list[Event], db: str | None) -> SqlLog | None:
    """The stored log of the run in file ``path`` when it holds exactly ``events``.

    The file decides. A store that holds another history of the run (a line of the
    file edited since, or more or fewer events) is never appended to: that would
    graft the file's steps onto a history they do not follow. Only the file goes on
    then, and a note on stderr says why; a store without the run is left alone quietly.
    """
    run_id = events[0].run
    try:
        stored = open_store(db, create=False).log(run_id)
        theirs = stored.load()
    except RunNotFoundError:
        return None
    except (StoreError, EventLogError) as exc:
        _note(f"{path}: the stored copy of run {run_id} cannot be read ({exc}); {_FILE_ONLY}")
        return None
    at = first_difference(events, theirs)
    if at is None:
        return stored
    counts = f"{len(theirs)} events stored, {len(events)} in the file"
    _note(f"{path}: the stored copy of run {run_id} differs from event {at} on ({counts}); "
          f"{_FILE_ONLY}")  # fmt: skip
    return None


_FILE_ONLY = "only the file is written"


def _note(text: str) -> None:
    print(f"roost: note: {text}", file=sys.stderr)


def is_file_ref(ref: str) -> bool:
    """True when ``ref`` names a JSON Lines file rather than a stored run."""
    return ref.endswith(".jsonl") or "/" in ref or Path(ref).is_file()


def file_log(ref: str) -> JsonlLog:
    """The log of a run's JSON Lines file; RunNotFoundError when there is none."""
    path = Path(ref)
    if not path.is_file():
        raise RunNotFoundError(f"{ref}: no such event file")
    log = JsonlLog(path)
    if not log.load():
        raise RunNotFoundError(f"{ref}: the event file holds no run")
    return log
