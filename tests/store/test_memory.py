"""The store's memory on SQLite: storing, recalling by words, forgetting, scopes, FTS injection."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from roost.events import MemoryEntry
from roost.store.memory import SqlMemory, match_expression
from roost.store.sql import SqlStore

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def memory(tmp_path: Path) -> SqlMemory:
    return SqlMemory(SqlStore(f"sqlite:///{tmp_path / 'roost.db'}"))


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
    assert memory.forget("flow:a", "tea") is True
    assert memory.forget("flow:a", "tea") is False
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
        "'; DROP TABLE memory; --",
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
