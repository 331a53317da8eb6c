"""A run's state as a pure function of its events.

``fold(events)`` builds a ``RunState`` from nothing; ``apply(state, event)``
advances one in place (``roost.runstate._fold``, the one place a run's state
changes). ``RunState`` and what it holds are in ``roost.runstate._state``; the
history's threads and the run's answer in ``roost.runstate._history``.
"""

from __future__ import annotations

from roost.runstate._fold import (
    HANDLERS,
    apply,
    assistant_message,
    elapsed,
    fold,
    statuses,
    usage_of,
)
from roost.runstate._history import (
    EMPTY_THREAD,
    HistoryEntry,
    Thread,
    answer_entry,
    last_success,
    marker_rules,
    run_answer,
    without_marker,
)
from roost.runstate._state import (
    STATUS_AFTER,
    RunState,
    Spent,
    Status,
    Turn,
    spent_from,
    status_after,
)

__all__ = [
    "EMPTY_THREAD",
    "HANDLERS",
    "STATUS_AFTER",
    "HistoryEntry",
    "RunState",
    "Spent",
    "Status",
    "Thread",
    "Turn",
    "answer_entry",
    "apply",
    "assistant_message",
    "elapsed",
    "fold",
    "last_success",
    "marker_rules",
    "run_answer",
    "spent_from",
    "status_after",
    "statuses",
    "usage_of",
    "without_marker",
]
