"""A recorded run's answers, as the sources of a Runner: a replay runs on these.

Each source answers a call with what the record says answered it at the same
point (``providers``: the next ``llm_call`` of that provider; ``tools``: the
recorded result of the same call; ``world``: memory recalls, skills, background
results, the events' times; ``decisions``: hooks and ``python`` routes), and
``stops`` says where the recorded process stopped. Nothing a run file names is
started, imported or called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine.recorded.decisions import RecordedHooks, RecordedRoutes
from roost.engine.recorded.providers import RecordedProviders, ReplayedError
from roost.engine.recorded.stops import ProcessStopped, StoppingLog, Stops
from roost.engine.recorded.tools import RecordedTools
from roost.engine.recorded.world import (
    LegacyDigests,
    RecordedBackground,
    RecordedClock,
    RecordedMemory,
    RecordedSkills,
)
from roost.engine.sources import Sources

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.engine._replies import ToolsFor
    from roost.events import Event
    from roost.ports import ImageStore

__all__ = [
    "ProcessStopped",
    "RecordedBackground",
    "RecordedClock",
    "RecordedHooks",
    "RecordedMemory",
    "RecordedProviders",
    "RecordedRoutes",
    "RecordedSkills",
    "RecordedTools",
    "ReplayedError",
    "StoppingLog",
    "Stops",
    "recorded_sources",
]


def recorded_sources(
    recorded: Sequence[Event],
    stops: Stops,
    *,
    capture: int | None = None,
    tools: ToolsFor | None = None,
    images: ImageStore | None = None,
) -> Sources:
    """Every source of a Runner answering from ``recorded``; ``tools`` (live tools) runs
    those tools instead, and the child runs of background tasks anew."""
    return Sources(
        providers=RecordedProviders(recorded, stops, capture),
        tools=tools or RecordedTools(recorded, stops),
        clock=RecordedClock(recorded),
        memory=RecordedMemory(recorded),
        skills=RecordedSkills(recorded),
        hooks=RecordedHooks(recorded),  # no hook is run again
        images=images,
        # Background results come from the record, in its order (live tools run children anew).
        background=None if tools else RecordedBackground(recorded, stops),
        routes=RecordedRoutes(recorded),  # no python condition is called again
        legacy_digests=LegacyDigests.of(recorded),
    )
