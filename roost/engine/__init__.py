"""The interpreter of roost flows: the Runner, and the fold it keeps current.

``Runner(flow, log)`` starts, continues and retries runs. ``fold(events)``
gives a run's ``RunState``; it lives in ``roost.runstate`` (every reader of a
run uses it) and is named here too for the engine's callers. ``Runner`` is
imported on first use, so that a reader of run state never loads the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.runstate import HistoryEntry, RunState, apply, fold

if TYPE_CHECKING:
    from roost.engine.child_runs import ChildRuns
    from roost.engine.runner import Runner
    from roost.engine.sources import Sources

__all__ = ["ChildRuns", "HistoryEntry", "RunState", "Runner", "Sources", "apply", "fold"]


def __getattr__(name: str) -> Any:
    if name == "Runner":
        from roost.engine.runner import Runner

        return Runner
    if name == "ChildRuns":
        from roost.engine.child_runs import ChildRuns

        return ChildRuns
    if name == "Sources":
        from roost.engine.sources import Sources

        return Sources
    raise AttributeError(f"module 'roost.engine' has no attribute {name!r}")
