"""Memory that lasts across runs, in the run store (SQLite, full-text search with FTS5).

One row per (scope, key) in ``memory``, and an FTS5 index over its keys and
contents kept in step by triggers. A query is searched as words: its words
are each quoted for FTS5, so quotes, ``AND``/``OR``/``NEAR``, ``*``, column
filters or SQL a model writes are only ever words to look for. Entries are
ranked by FTS5's own ``bm25`` weighted by the importance the model gave them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlalchemy import text

from roost.errors import StoreError
from roost.events import MemoryEntry, now_iso

if TYPE_CHECKING:
    from roost.store.sql import SqlStore

_TABLES = (
    """CREATE TABLE IF NOT EXISTS memory (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        content TEXT NOT NULL,
        importance REAL NOT NULL,
        run TEXT NOT NULL,
        updated TEXT NOT NULL,
        UNIQUE (scope, key))""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
        key, content, content='memory', content_rowid='id', tokenize='unicode61')""",
    """CREATE TRIGGER IF NOT EXISTS memory_added AFTER INSERT ON memory BEGIN
        INSERT INTO memory_fts(rowid, key, content) VALUES (new.id, new.key, new.content);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memory_removed AFTER DELETE ON memory BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, key, content)
        VALUES ('delete', old.id, old.key, old.content);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memory_changed AFTER UPDATE ON memory BEGIN
        INSERT INTO memory_fts(memory_fts, rowid, key, content)
        VALUES ('delete', old.id, old.key, old.content);
        INSERT INTO memory_fts(rowid, key, content) VALUES (new.id, new.key, new.content);
    END""",
)

_STORE = text(
    "INSERT INTO memory (scope, key, content, importance, run, updated) "
    "VALUES (:scope, :key, :content, :importance, :run, :updated) "
    "ON CONFLICT (scope, key) DO UPDATE SET content = excluded.content, "
    "importance = excluded.importance, run = excluded.run, updated = excluded.updated"
)
_FORGET = text("DELETE FROM memory WHERE scope = :scope AND key = :key")
# bm25 is negative, better matches more so: an important entry moves further ahead.
_RECALL = text(
    "SELECT m.key, m.content, m.importance FROM memory_fts "
    "JOIN memory AS m ON m.id = memory_fts.rowid "
    "WHERE memory_fts MATCH :match AND m.scope = :scope "
    "ORDER BY bm25(memory_fts) * (0.5 + m.importance), m.id LIMIT :limit"
)
_ALL = text(
    "SELECT key, content, importance FROM memory WHERE scope = :scope ORDER BY importance DESC, id"
)
_EVERY = text(
    "SELECT scope, key, content, importance FROM memory ORDER BY scope, importance DESC, id"
)
_WORD = re.compile(r"\w+")
MAX_QUERY_WORDS = 64


def match_expression(query: str) -> str | None:
    """The FTS5 expression finding any of the words of ``query``; None when it has none.

    Each word is quoted, so FTS5 reads it as a word and nothing else (``\\w+``
    holds no quote to escape).
    """
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(query)))
    if not words:
        return None
    return " OR ".join(f'"{word}"' for word in words[:MAX_QUERY_WORDS])


class SqlMemory:
    """The ``MemoryBank`` of a run store (SQLite only, so far)."""

    def __init__(self, store: SqlStore) -> None:
        if store.engine.dialect.name != "sqlite":
            raise StoreError(
                f"memory needs a SQLite store for now; {store.shown_url} is "
                f"{store.engine.dialect.name}"
            )
        self._store = store
        with store.translate("prepare memory"), store.engine.begin() as connection:
            for statement in _TABLES:
                connection.execute(text(statement))

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None:
        """Keeps ``entry`` under its key in ``scope``, replacing what was there."""
        values = {
            "scope": scope,
            "key": entry.key,
            "content": entry.content,
            "importance": entry.importance,
            "run": run,
            "updated": now_iso(),
        }
        with self._store.translate("store memory"), self._store.engine.begin() as connection:
            connection.execute(_STORE, values)

    def forget(self, scope: str, key: str) -> bool:
        """Removes the entry ``key`` of ``scope``; False when there was none."""
        with self._store.translate("forget memory"), self._store.engine.begin() as connection:
            return bool(connection.execute(_FORGET, {"scope": scope, "key": key}).rowcount)

    def recall(self, scope: str, query: str, limit: int) -> list[MemoryEntry]:
        """The best ``limit`` entries of ``scope`` for the words of ``query``."""
        match = match_expression(query)
        if match is None or limit <= 0:
            return []
        values = {"match": match, "scope": scope, "limit": limit}
        with self._store.translate("recall memory"), self._store.engine.connect() as connection:
            rows = connection.execute(_RECALL, values).all()
        return [MemoryEntry(key=k, content=c, importance=i) for k, c, i in rows]

    def every_entry(self) -> list[tuple[str, MemoryEntry]]:
        """Every entry of every scope, with its scope, by scope and importance."""
        with self._store.translate("list memory"), self._store.engine.connect() as connection:
            rows = connection.execute(_EVERY).all()
        return [(s, MemoryEntry(key=k, content=c, importance=i)) for s, k, c, i in rows]

    def entries(self, scope: str) -> list[MemoryEntry]:
        """Every entry of ``scope``, the most important first."""
        with self._store.translate("list memory"), self._store.engine.connect() as connection:
            rows = connection.execute(_ALL, {"scope": scope}).all()
        return [MemoryEntry(key=k, content=c, importance=i) for k, c, i in rows]
