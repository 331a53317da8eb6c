"""The store's memory on SQLite and PostgreSQL: storing, recalling by words, forgetting,
scopes, FTS injection, the memory of a past moment, timeline entries."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from roost.events import MemoryEntry, TimelineEntry
from roost.store.memory import SqlMemory, match_expression, moment, websearch_words
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> SqlMemory:
    if request.param == "sqlite":
        return SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))
    return SqlMemory(SqlStore(request.getfixturevalue("pg_url")))


def entry(key: str, content: str, importance: float = 0.5) -> MemoryEntry:
    return MemoryEntry(key=key, content=content, importance=importance)


def keys(found: list[MemoryEntry]) -> list[str]:
    return [e.key for e in found]


def test_a_stored_entry_is_recalled_by_a_word_of_its_content(memory: SqlMemory) -> None:
    memory.store("flow:a", entry("tea", "The user drinks green tea."), "run-1")
    memory.store("flow:a", entry("city", "The user lives in Lyon."), "run-1")
    assert keys(memory.recall("flow:a", "Which TEA shall I brew?", 5)) == ["tea"]
    assert memory.recall("flow:a", "nothing about that", 5) == []


def test_storing_a_key_again_replaces_its_entry(memory: SqlMemory) -> None:
    memory.store("flow:a", entry("tea", "green tea"), "run-1")
    memory.store("flow:a", entry("tea", "black tea"), "run-2")
    assert memory.entries("flow:a") == [entry("tea", "black tea")]
    assert memory.recall("flow:a", "green", 5) == []  # the index forgot the old words too
    assert keys(memory.recall("flow:a", "black", 5)) == ["tea"]


def test_forget_removes_the_entry_and_its_words(memory: SqlMemory) -> None:
    memory.store("flow:a", entry("tea", "green tea"), "run-1")
    assert memory.forget("flow:a", "tea", "run-2") is True
    assert memory.forget("flow:a", "tea", "run-2") is False
    assert memory.recall("flow:a", "green tea", 5) == []


def test_scopes_keep_apart(memory: SqlMemory) -> None:
    memory.store("agent:f/a", entry("tea", "green tea"), "run-1")
    assert memory.recall("agent:f/b", "tea", 5) == []
    assert keys(memory.recall("agent:f/a", "tea", 5)) == ["tea"]


def test_importance_puts_an_equal_match_first_and_limit_is_kept(memory: SqlMemory) -> None:
    memory.store("s", entry("minor", "coffee in the morning", 0.1), "r")
    memory.store("s", entry("major", "coffee in the evening", 1.0), "r")
    memory.store("s", entry("other", "coffee at noon", 0.5), "r")
    assert keys(memory.recall("s", "coffee", 2)) == ["major", "other"]


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        "tea AND NOT coffee",
        "tea OR",
        "NEAR(tea coffee, 2)",
        "te*",
        "key:tea",
        "content : tea ^ -tea +tea",
        "'; DROP TABLE memory_entries; --",
        "tea\x00coffee",
        "()(){}[]",
        "",
    ],
)
def test_fts_syntax_in_a_query_is_searched_as_words(memory: SqlMemory, query: str) -> None:
    memory.store("s", entry("tea", "green tea"), "r")
    memory.store("s", entry("drop", "memory table"), "r")
    found = keys(memory.recall("s", query, 5))  # never raises
    words = {w.lower() for w in re.findall(r"\w+", query)}
    assert ("tea" in found) == ("tea" in words)
    assert memory.entries("s") != []  # the table is still there


def test_the_match_expression_quotes_every_word() -> None:
    assert match_expression('NEAR("a" b*)') == '"near" OR "a" OR "b"'
    assert match_expression("  ?! ") is None


def test_the_websearch_words_are_only_words_any_of_which_matches() -> None:
    assert websearch_words('-tea "green" OR (coffee) and') == "tea or green or coffee"
    assert websearch_words("or and") is None


def test_a_nul_character_in_a_query_is_no_word(memory: SqlMemory) -> None:
    memory.store("s", entry("tea", "green tea"), "r")
    assert keys(memory.recall("s", "\x00tea\x00", 5)) == ["tea"]


def test_opening_the_memory_twice_keeps_what_it_holds(memory: SqlMemory) -> None:
    memory.store("s", entry("tea", "green tea"), "r")
    again = SqlMemory(memory._store)  # a second process opening the same store
    assert keys(again.recall("s", "tea", 5)) == ["tea"]


def test_the_memory_of_a_past_moment_is_read_back(memory: SqlMemory) -> None:
    memory.store("s", entry("tea", "green tea"), "r1")
    memory.store("s", entry("city", "Lyon is home"), "r1")
    first = moment()
    memory.store("s", entry("tea", "black tea"), "r2")
    memory.forget("s", "city", "r2")
    memory.store("s", entry("dog", "a dog called Rex"), "r2")
    assert memory.entries("s", as_of=first) == [
        entry("tea", "green tea"),
        entry("city", "Lyon is home"),
    ]
    assert keys(memory.recall("s", "green black Lyon Rex", 5, as_of=first)) == ["tea", "city"]
    assert memory.recall("s", "black", 5, as_of=first) == []
    assert memory.entries("s") == [entry("tea", "black tea"), entry("dog", "a dog called Rex")]
    assert memory.recall("s", "green Lyon", 5) == []
    assert memory.entries("s", as_of="2000-01-01") == []


def test_a_key_stored_again_after_forget_is_there(memory: SqlMemory) -> None:
    memory.store("s", entry("tea", "green tea"), "r")
    assert memory.forget("s", "tea", "r")
    memory.store("s", entry("tea", "mint tea"), "r")
    assert memory.entries("s") == [entry("tea", "mint tea")]
    assert keys(memory.recall("s", "mint", 5, as_of=moment())) == ["tea"]


def test_every_entry_lists_each_scope_as_it_is_now(memory: SqlMemory) -> None:
    memory.store("b", entry("tea", "green tea"), "r")
    memory.store("a", entry("tea", "old"), "r")
    memory.store("a", entry("tea", "new"), "r")
    assert memory.every_entry() == [("a", entry("tea", "new")), ("b", entry("tea", "green tea"))]


def summary(at: str, text: str, run: str = "r1") -> TimelineEntry:
    return TimelineEntry(at=moment(at), run=run, summary=text)


def test_timeline_entries_are_found_by_words_and_by_time(memory: SqlMemory) -> None:
    memory.keep_timeline("s", summary("2026-11-01T10:00:00Z", "We planned the trip to Rome."))
    memory.keep_timeline("s", summary("2026-11-15T10:00:00Z", "We booked a hotel in Rome."))
    memory.keep_timeline("s", summary("2026-11-20T10:00:00Z", "The budget is 900 euros."))
    memory.keep_timeline("other", summary("2026-11-20T10:00:00Z", "Rome elsewhere."))
    found = memory.timeline("s", "Rome", 5)
    assert [e.summary for e in found] == [
        "We booked a hotel in Rome.",
        "We planned the trip to Rome.",
    ]
    assert found[0] == summary("2026-11-15T10:00:00Z", "We booked a hotel in Rome.")
    newest = memory.timeline("s", "", 2)  # no words: the newest first
    assert [e.summary for e in newest] == ["The budget is 900 euros.", "We booked a hotel in Rome."]
    window = memory.timeline("s", "", 5, since="2026-11-10", until="2026-11-15")
    assert [e.summary for e in window] == ["We booked a hotel in Rome."]  # until: the whole day
    assert memory.timeline("s", "Rome", 5, as_of="2026-11-10T00:00:00Z")[0].at.startswith(
        "2026-11-01"
    )
    assert memory.timeline("s", '"Rome" NEAR *', 5, until="2026-10-01") == []


def test_a_time_that_is_not_one_is_a_value_error(memory: SqlMemory) -> None:
    with pytest.raises(ValueError):
        memory.timeline("s", "", 5, since="last week")


def test_matches_of_other_scopes_or_old_versions_never_hide_an_entry(
    memory: SqlMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("roost.store.memory.CANDIDATES", 2)  # the best 2 matches are weighed
    for n in range(4):
        memory.store("other", entry(f"o{n}", "tea tea tea tea"), "r")
    memory.store("s", entry("old", "tea tea tea"), "r")
    memory.store("s", entry("old", "coffee"), "r")  # its tea version is the best match left
    memory.store("s", entry("mine", "a cup of tea among many words here"), "r")
    assert keys(memory.recall("s", "tea", 5)) == ["mine"]
    assert keys(memory.recall("s", "tea", 5, as_of=moment())) == ["mine"]
    for n in range(3):  # versions since replaced crowd the best matches of the past too
        memory.store("s", entry("old", "tea " * (n + 5)), "r")
    assert keys(memory.recall("s", "tea", 5, as_of=moment())) == ["old", "mine"]
    assert keys(memory.recall("s", "tea coffee", 1)) != []
