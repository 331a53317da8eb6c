"""Where a run's answers come from: the sources a Runner is handed, live or recorded.

A Runner asks its sources for everything outside its log: the providers that
answer model calls, the tools an agent is offered, the memory recalls read,
the skills shown, the hooks' decisions, the images kept, the background tasks'
results, the routes' ``python`` conditions and the clock that stamps events.
``Sources()`` leaves each to the live default (``roost.engine.defaults``,
picked when the Runner first needs it); ``roost.engine.recorded``'s
``recorded_sources`` answers each from a recorded run's events, for a replay,
with nothing run or imported.

A recorded source must know where the run it answers stands (the next seq,
the flow in force, the tool calls open): the Runner hands itself, as a
``RunPosition``, to every source that has a ``bind`` method, once, when it is
made. No source is patched from outside.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.engine._replies import SkillsFor, ToolsFor
    from roost.engine.background import BackgroundSource
    from roost.engine.hooks import HooksFor
    from roost.engine.recorder import Clock
    from roost.engine.routes import RouteJudge
    from roost.flow.models import Flow
    from roost.ports import ImageStore, MemoryBank
    from roost.providers.base import Provider
    from roost.runstate import RunState


class RunPosition(Protocol):
    """What a recorded source reads of the run it answers (a Runner is one)."""

    @property
    def flow(self) -> Flow: ...  # the flow in force
    @property
    def state(self) -> RunState: ...  # where the run stands: its next seq, its open calls

    def cancel(self) -> bool: ...


@runtime_checkable
class Bound(Protocol):
    """A source that reads where the run stands: the Runner binds itself to it once."""

    def bind(self, run: RunPosition) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Sources:
    """What a Runner asks for outside its log; None leaves one to the live default."""

    providers: Callable[[str], Provider] | None = None  # a provider entry's name -> Provider
    tools: ToolsFor | None = None  # (agent, text) -> the tools it is offered
    memory: MemoryBank | None = None  # where memory tools and recall keep and find entries
    skills: SkillsFor | None = None  # the skills agents are shown (default: those found now)
    hooks: HooksFor | None = None  # the hooks' decisions (default: the flow's hooks, run)
    images: ImageStore | None = None  # where message images are kept (default: in memory)
    background: BackgroundSource | None = None  # background tasks' results (default: run)
    routes: RouteJudge | None = None  # who judges ``python`` route conditions
    clock: Clock | None = None  # stamps the events (default: now, in UTC)
    # A replay of a run recorded before requests were digested whole: whether the call
    # being made now was recorded with the old digest, to be digested the same way.
    legacy_digests: Callable[[], bool] | None = None

    def bind(self, run: RunPosition) -> None:
        """Tells each source that reads the run's position where to read it."""
        for field in fields(self):
            source = getattr(self, field.name)
            if isinstance(source, Bound):
                source.bind(run)
