"""memory#store, recall, forget and timeline_recall called as a model calls them, on a real bank."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from roost.tools import ToolOutcome
from roost.tools.memory_tool import MemoryTool, shown_time

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def bank(tmp_path: Path) -> SqlMemory:
    return SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))


def tool(name: str, bank: SqlMemory, scope: str = "agent:helper") -> MemoryTool:
    return MemoryTool(name, f"memory__{name}", scope, bank, "run-1")


async def test_a_stored_entry_is_recalled_by_its_words_then_forgotten(bank: SqlMemory) -> None:
    stored = await tool("store", bank).call({"key": "tea", "content": "Likes green tea."})
    assert stored == ToolOutcome("Remembered 'tea'.")
    assert await tool("recall", bank).call({"query": "green"}) == ToolOutcome(
        "- tea: Likes green tea."
    )
    assert await tool("recall", bank, scope="agent:other").call({"query": "green"}) == (
        ToolOutcome("Nothing remembered matches.")
    )  # another scope sees nothing of it
    assert await tool("forget", bank).call({"key": "tea"}) == ToolOutcome("Forgot 'tea'.")
    again = await tool("forget", bank).call({"key": "tea"})
    assert again == ToolOutcome("Nothing is remembered under 'tea'.", is_error=True)


async def test_bad_arguments_are_error_results_and_nothing_is_stored(bank: SqlMemory) -> None:
    store = tool("store", bank)
    missing = await store.call({"key": "tea"})
    assert missing.is_error and missing.content.startswith("invalid arguments: ")
    nul = await store.call({"key": "t\x00a", "content": "x"})
    assert nul == ToolOutcome("invalid arguments: a key or content cannot hold NUL", True)
    assert await tool("recall", bank).call({"query": "tea"}) == ToolOutcome(
        "Nothing remembered matches."
    )


async def test_the_timeline_checks_its_dates_before_looking(bank: SqlMemory) -> None:
    timeline = tool("timeline_recall", bank)
    bad = await timeline.call({"query": "", "since": "last week"})
    assert bad == ToolOutcome(
        "invalid arguments: since: 'last week' is not an ISO date or time "
        "(such as 2026-03-01 or 2026-03-01T14:30)",
        is_error=True,
    )
    backwards = await timeline.call({"query": "", "since": "2026-03-02", "until": "2026-03-01"})
    assert backwards == ToolOutcome("invalid arguments: since is after until", is_error=True)
    empty = await timeline.call({"query": "", "since": "2026-03-01", "until": "2026-03-01"})
    assert empty == ToolOutcome("No summary of an earlier conversation matches.")


def test_a_time_is_shown_to_a_model_in_plain_words() -> None:
    assert shown_time("2026-03-01T14:30:05.123456Z") == "2026-03-01 14:30:05 UTC"
