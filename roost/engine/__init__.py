"""The interpreter of roost flows: run state, the Runner and the event fold.

``fold(events)`` gives a run's ``RunState``; ``Runner(flow, log)`` starts,
continues and retries runs. ``Runner`` is imported on first use so that the
node modules, which need only the state, never import the whole engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.engine.state import HistoryEntry, RunState, apply, fold

if TYPE_CHECKING:
    from roost.engine.runner import Runner

__all__ = ["HistoryEntry", "RunState", "Runner", "apply", "fold"]


def __getattr__(name: str) -> Any:
    if name == "Runner":
        from roost.engine.runner import Runner

        return Runner
    raise AttributeError(f"module 'roost.engine' has no attribute {name!r}")
