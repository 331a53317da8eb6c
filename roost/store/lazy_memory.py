"""A run store's memory, opened when a run first stores or recalls something.

Every way a run is started hands its Runner a memory bank, so that a flow with a
``memory:`` section (or a sub-flow with one) remembers however it is run. Most
flows have none: for them the store is never opened, and a run from Python on a
log kept in memory leaves no ``.roost`` folder behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.flow.models import FlowTool, ToolGroup

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.events import MemoryEntry, TimelineEntry
    from roost.flow.models import Flow
    from roost.ports import MemoryBank


def may_remember(flow: Flow) -> bool:
    """Whether a run of ``flow`` may use memory: it has a ``memory:`` section, or a
    sub-flow (which may have one, and uses its parent's memory)."""
    if flow.memory is not None:
        return True
    for tool in flow.tools.values():
        members = tool.tools.values() if isinstance(tool, ToolGroup) else (tool,)
        if any(isinstance(member, FlowTool) for member in members):
            return True
    return False


class LazyMemory:
    """The ``MemoryBank`` ``open()`` makes, made at its first use and kept.

    ``close()`` calls ``close`` (when given) if the bank was opened: it lets go of
    what ``open`` made (a store of its own); a later use opens the bank again.
    """

    def __init__(
        self, open: Callable[[], MemoryBank], close: Callable[[], None] | None = None
    ) -> None:
        self._open = open
        self._close = close
        self._bank: MemoryBank | None = None

    @property
    def bank(self) -> MemoryBank:
        """The bank itself, opened now if it was not yet."""
        if self._bank is None:
            self._bank = self._open()
        return self._bank

    @property
    def opened(self) -> bool:
        return self._bank is not None

    def close(self) -> None:
        if self._bank is not None and self._close is not None:
            self._close()
        self._bank = None

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None:
        self.bank.store(scope, entry, run)

    def forget(self, scope: str, key: str, run: str) -> bool:
        return self.bank.forget(scope, key, run)

    def recall(
        self, scope: str, query: str, limit: int, as_of: str | None = None
    ) -> list[MemoryEntry]:
        return self.bank.recall(scope, query, limit, as_of)

    def entries(self, scope: str, as_of: str | None = None) -> list[MemoryEntry]:
        return self.bank.entries(scope, as_of)

    def keep_timeline(self, scope: str, entry: TimelineEntry) -> None:
        self.bank.keep_timeline(scope, entry)

    def timeline(
        self,
        scope: str,
        query: str,
        limit: int,
        *,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> list[TimelineEntry]:
        return self.bank.timeline(scope, query, limit, since=since, until=until, as_of=as_of)
