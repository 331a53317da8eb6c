"""Memory that lasts across runs, in the run store (SQLite or PostgreSQL).

Two tables: ``memory_entries`` (knowledge entries by scope and key) and
``memory_timeline`` (summaries of compacted conversations). Every write adds
a row and none is changed in place but for the ``latest`` flag: storing a key
again adds its new version, forgetting adds a row marked ``gone``. So the
memory as it was at any past time can be read back (``as_of``: a fork sees the
memory of its fork point), and the memory of now is the rows marked latest.

Full-text search is the database's own: an FTS5 index on SQLite, a
``tsvector`` column with a GIN index on PostgreSQL. A query is searched as
words: the words of any text are taken out and searched for each on its own,
so quotes, operators, ``*``, ``NEAR``, column filters or SQL that a model
writes are only ever words to look for. Entries are ranked by how well they
match (FTS5's ``bm25``, PostgreSQL's ``ts_rank``) weighted by their importance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, Column, Float, Index, Integer, String, Table, Text, text
from sqlalchemy.exc import SQLAlchemyError

from roost.errors import StoreError
from roost.events import MemoryEntry, TimelineEntry, iso_bound, now_iso
from roost.ports import words
from roost.store.schema import METADATA

if TYPE_CHECKING:
    from sqlalchemy import Connection, TextClause

    from roost.store.sql import SqlStore

MAX_QUERY_WORDS = 64  # words of a query searched for; the rest are left out
# The best matches by words that are then weighted by importance (SQLite: with
# 100,000 entries a recall looked up each of its ~2,000 matches, 40 % of its time).
CANDIDATES = 100


def _scoped(name: str, *parts: Any) -> Table:
    """A Core table (as the store's others are: no pydantic model or ORM mapping at
    import) of rows numbered by ``id`` in a ``scope``, then ``parts``."""
    return Table(
        name,
        METADATA,
        Column("id", Integer, primary_key=True),
        Column("scope", String(256), nullable=False),
        *parts,
    )


# One version of a knowledge entry: what ``key`` held in ``scope`` from ``at`` on.
ENTRIES = _scoped(
    "memory_entries",
    Column("key", String(256), nullable=False),
    Column("content", Text, nullable=False),
    Column("importance", Float, nullable=False, default=0.5),
    Column("run", String(64), nullable=False),  # the run that wrote it ("" from `roost memory add`)
    Column("at", String(40), nullable=False),  # fixed-width ISO time: text order is time order
    Column("gone", Boolean, nullable=False, default=False),  # a forget: the key holds nothing
    Column("latest", Boolean, nullable=False, default=True),  # newest of its key, not gone
    Index("ix_memory_entries_key", "scope", "key", "id"),
    Index("ix_memory_entries_latest", "scope", "latest"),
)

# One timeline entry: a summary that replaced older messages of ``run``.
TIMELINE = _scoped(
    "memory_timeline",
    Column("run", String(64), nullable=False),
    Column("at", String(40), nullable=False),
    Column("summary", Text, nullable=False),
    Index("ix_memory_timeline_at", "scope", "at"),
)


def moment(value: str | None = None) -> str:
    """``value`` (an ISO date or time; now when None) as the store writes times.

    Fixed width with microseconds, in UTC: ``isoformat`` drops a zero fraction,
    which would put 12:00:00Z after 12:00:00.5Z in text order. A bare date is
    its first moment. ValueError when ``value`` is no ISO date or time.
    """
    if value is None:
        return now_iso()
    return iso_bound(value, end=False)


def query_words(query: str) -> list[str]:
    """The distinct words of ``query``, lower-cased, in order (at most MAX_QUERY_WORDS)."""
    return list(dict.fromkeys(words(query)))[:MAX_QUERY_WORDS]


def match_expression(query: str) -> str | None:
    """The FTS5 expression finding any of the words of ``query``; None when it has none.

    Each word is quoted, so FTS5 reads it as a word and nothing else (``\\w+``
    holds no quote to escape).
    """
    words = query_words(query)
    return " OR ".join(f'"{word}"' for word in words) if words else None


def websearch_words(query: str) -> str | None:
    """The words of ``query`` for PostgreSQL's ``websearch_to_tsquery``, any one matching.

    Only ``\\w+`` words reach it, joined by ``or``, its operator for either: no
    quote, ``-`` or parenthesis a model wrote is ever read as syntax. The words
    ``or`` and ``and`` themselves are left out (they would be read as operators).
    """
    words = [word for word in query_words(query) if word not in {"or", "and"}]
    return " or ".join(words) if words else None


class _Dialect:
    """The statements one database needs for memory: its DDL and its searches."""

    ddl: tuple[str, ...] = ()
    # Taken before a key's versions change, so two writers of one key take turns
    # (SQLite's writers always do; PostgreSQL's would both leave a latest version).
    lock_key: TextClause | None = None
    recall_now: TextClause
    recall_as_of: TextClause
    timeline_search: TextClause

    # The recalls that look at the best CANDIDATES matches only (and at every match
    # when those give fewer entries than asked for).
    prelimited: tuple[TextClause, ...] = ()
    every_candidate = 1_000_000_000  # a LIMIT that leaves nothing out

    def match(self, query: str, scope: str = "") -> str | None:
        """The search for the words of ``query`` in ``scope``; None when it has no word."""
        raise NotImplementedError


# A version is seen at ``as_of`` when it is the newest of its key written by then.
_SEEN_AS_OF = """m.scope = :scope AND m.at <= :as_of AND NOT m.gone AND NOT EXISTS (
    SELECT 1 FROM memory_entries AS n
    WHERE n.scope = m.scope AND n.key = m.key AND n.at <= :as_of AND n.id > m.id)"""
_TIMELINE_WINDOW = "t.scope = :scope AND t.at >= :since AND t.at <= :until"


class _SQLite(_Dialect):
    ddl = (
        """CREATE VIRTUAL TABLE IF NOT EXISTS memory_entries_fts USING fts5(
            key, content, content='memory_entries', content_rowid='id', tokenize='unicode61')""",
        # Versions that hold something are indexed; forgets (gone) hold no words.
        """CREATE TRIGGER IF NOT EXISTS memory_entries_added AFTER INSERT ON memory_entries
            WHEN NOT new.gone BEGIN
            INSERT INTO memory_entries_fts(rowid, key, content)
            VALUES (new.id, new.key, new.content);
        END""",
        """CREATE TRIGGER IF NOT EXISTS memory_entries_removed AFTER DELETE ON memory_entries
            WHEN NOT old.gone BEGIN
            INSERT INTO memory_entries_fts(memory_entries_fts, rowid, key, content)
            VALUES ('delete', old.id, old.key, old.content);
        END""",
        """CREATE VIRTUAL TABLE IF NOT EXISTS memory_timeline_fts USING fts5(
            summary, content='memory_timeline', content_rowid='id', tokenize='unicode61')""",
        """CREATE TRIGGER IF NOT EXISTS memory_timeline_added AFTER INSERT ON memory_timeline
            BEGIN
            INSERT INTO memory_timeline_fts(rowid, summary) VALUES (new.id, new.summary);
        END""",
        """CREATE TRIGGER IF NOT EXISTS memory_timeline_removed AFTER DELETE ON memory_timeline
            BEGIN
            INSERT INTO memory_timeline_fts(memory_timeline_fts, rowid, summary)
            VALUES ('delete', old.id, old.summary);
        END""",
    )
    # FTS5 ranks the matches by bm25 and gives the best :candidates of every scope;
    # only those are looked up, kept when of the scope, and weighted by importance.
    # bm25 is negative, better matches more so: an important entry moves further ahead.
    _best = (
        "SELECT m.key, m.content, m.importance FROM ("
        " SELECT rowid AS id, rank AS score FROM memory_entries_fts"
        " WHERE memory_entries_fts MATCH :match"
        " ORDER BY rank LIMIT :candidates) AS f"
        " JOIN memory_entries AS m ON m.id = f.id WHERE {seen}"
        " ORDER BY f.score * (0.5 + m.importance), m.id LIMIT :limit"
    )
    recall_now = text(_best.format(seen="m.scope = :scope AND m.latest"))
    recall_as_of = text(_best.format(seen=_SEEN_AS_OF))
    prelimited = (recall_now, recall_as_of)
    timeline_search = text(
        "SELECT t.at, t.run, t.summary FROM ("
        " SELECT rowid AS id, bm25(memory_timeline_fts) AS score"
        " FROM memory_timeline_fts WHERE memory_timeline_fts MATCH :match) AS f"
        " JOIN memory_timeline AS t ON t.id = f.id"
        f" WHERE {_TIMELINE_WINDOW}"
        " ORDER BY f.score, t.at DESC LIMIT :limit"
    )
    every_candidate = -1  # LIMIT -1: no limit

    def match(self, query: str, scope: str = "") -> str | None:
        return match_expression(query)


class _PostgreSQL(_Dialect):
    # The 'simple' configuration: words as written, lower-cased, in any language.
    # fastupdate off: with it, new entries wait in a list every search reads through
    # (after loading 100,000 entries that list made each search three times slower).
    ddl = (
        """ALTER TABLE memory_entries ADD COLUMN IF NOT EXISTS words tsvector
            GENERATED ALWAYS AS (to_tsvector('simple', key || ' ' || content)) STORED""",
        """CREATE INDEX IF NOT EXISTS ix_memory_entries_words ON memory_entries
            USING GIN (words) WITH (fastupdate = off)""",
        """ALTER TABLE memory_timeline ADD COLUMN IF NOT EXISTS words tsvector
            GENERATED ALWAYS AS (to_tsvector('simple', summary)) STORED""",
        """CREATE INDEX IF NOT EXISTS ix_memory_timeline_words ON memory_timeline
            USING GIN (words) WITH (fastupdate = off)""",
    )
    lock_key = text("SELECT pg_advisory_xact_lock(hashtext(:scope), hashtext(:key))")
    # The query is made once, in FROM: written inside ts_rank it was made again for
    # every match (websearch_to_tsquery is only stable), most of a recall's time.
    _query = "websearch_to_tsquery('simple', :match) AS q"
    recall_now = text(
        f"SELECT m.key, m.content, m.importance FROM memory_entries AS m, {_query}"
        " WHERE m.words @@ q AND m.scope = :scope AND m.latest"
        " ORDER BY ts_rank(m.words, q) * (0.5 + m.importance) DESC, m.id LIMIT :limit"
    )
    # Of the best matches that were written by then, those not replaced by then: the
    # check for a newer version is made for the best :candidates only.
    recall_as_of = text(
        "SELECT m.key, m.content, m.importance FROM ("
        " SELECT m.id, ts_rank(m.words, q) * (0.5 + m.importance) AS score"
        f" FROM memory_entries AS m, {_query}"
        " WHERE m.words @@ q AND m.scope = :scope AND m.at <= :as_of AND NOT m.gone"
        " ORDER BY score DESC, m.id LIMIT :candidates) AS f"
        f" JOIN memory_entries AS m ON m.id = f.id WHERE {_SEEN_AS_OF}"
        " ORDER BY f.score DESC, m.id LIMIT :limit"
    )
    prelimited = (recall_as_of,)
    timeline_search = text(
        f"SELECT t.at, t.run, t.summary FROM memory_timeline AS t, {_query}"
        f" WHERE t.words @@ q AND {_TIMELINE_WINDOW}"
        " ORDER BY ts_rank(t.words, q) DESC, t.at DESC LIMIT :limit"
    )

    def match(self, query: str, scope: str = "") -> str | None:
        return websearch_words(query)


_DIALECTS: dict[str, type[_Dialect]] = {"sqlite": _SQLite, "postgresql": _PostgreSQL}

_RETIRE = text(
    "UPDATE memory_entries SET latest = false WHERE scope = :scope AND key = :key AND latest"
)
_ADD = text(
    "INSERT INTO memory_entries (scope, key, content, importance, run, at, gone, latest) "
    "VALUES (:scope, :key, :content, :importance, :run, :at, :gone, :latest)"
)
_NOW = text(
    "SELECT key, content, importance FROM memory_entries AS m "
    "WHERE m.scope = :scope AND m.latest ORDER BY m.importance DESC, m.id"
)
_AS_OF = text(
    "SELECT m.key, m.content, m.importance FROM memory_entries AS m "
    f"WHERE {_SEEN_AS_OF} ORDER BY m.importance DESC, m.id"
)
_EVERY = text(
    "SELECT scope, key, content, importance FROM memory_entries WHERE latest "
    "ORDER BY scope, importance DESC, id"
)
_KEEP_TIMELINE = text(
    "INSERT INTO memory_timeline (scope, run, at, summary) VALUES (:scope, :run, :at, :summary)"
)
_TIMELINE_NEWEST = text(
    "SELECT t.at, t.run, t.summary FROM memory_timeline AS t "
    f"WHERE {_TIMELINE_WINDOW} ORDER BY t.at DESC, t.id DESC LIMIT :limit"
)
_EARLIEST, _LATEST = "0000", "9999"  # below and above every time the store writes


class SqlMemory:
    """The ``MemoryBank`` of a run store: SQLite with FTS5, or PostgreSQL."""

    def __init__(self, store: SqlStore) -> None:
        name = store.engine.dialect.name
        if name not in _DIALECTS:
            raise StoreError(f"{store.shown_url}: memory needs SQLite or PostgreSQL, not {name}")
        self._store = store
        self._sql = _DIALECTS[name]()
        with store.translate("prepare memory"):
            _create(store, self._sql.ddl)

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None:
        """Keeps ``entry`` under its key in ``scope``: its newest version from now on."""
        values = _row(scope, entry.key, entry.content, entry.importance, run, gone=False)
        with self._store.translate("store memory"), self._store.engine.begin() as connection:
            self._retire(connection, scope, entry.key)
            connection.execute(_ADD, values)

    def forget(self, scope: str, key: str, run: str) -> bool:
        """Removes the entry ``key`` of ``scope`` from now on; False when there was none."""
        with self._store.translate("forget memory"), self._store.engine.begin() as connection:
            if not self._retire(connection, scope, key):
                return False
            connection.execute(_ADD, _row(scope, key, "", 0.0, run, gone=True))
        return True

    def recall(
        self, scope: str, query: str, limit: int, as_of: str | None = None
    ) -> list[MemoryEntry]:
        """The best ``limit`` entries of ``scope`` for the words of ``query`` (at ``as_of``)."""
        match = self._sql.match(query, scope)
        if match is None or limit <= 0:
            return []
        values: dict[str, Any] = {"match": match, "scope": scope, "limit": limit}
        values["candidates"] = max(CANDIDATES, limit)
        statement = self._sql.recall_now
        if as_of is not None:
            values["as_of"] = moment(as_of)
            statement = self._sql.recall_as_of
        rows = self._read("recall memory", statement, values)
        if len(rows) < limit and statement in self._sql.prelimited:
            # Fewer than asked: the best matches may be of other scopes, or versions
            # since replaced (or not yet written at as_of). Look at every match then.
            values["candidates"] = self._sql.every_candidate
            rows = self._read("recall memory", statement, values)
        return [_entry(row) for row in rows]

    def entries(self, scope: str, as_of: str | None = None) -> list[MemoryEntry]:
        """Every entry of ``scope`` (as it was at ``as_of``), the most important first."""
        if as_of is None:
            rows = self._read("list memory", _NOW, {"scope": scope})
        else:
            rows = self._read("list memory", _AS_OF, {"scope": scope, "as_of": moment(as_of)})
        return [_entry(row) for row in rows]

    def every_entry(self) -> list[tuple[str, MemoryEntry]]:
        """Every entry of every scope as it is now, with its scope, by scope and importance."""
        return [(row[0], _entry(row[1:])) for row in self._read("list memory", _EVERY, {})]

    def keep_timeline(self, scope: str, entry: TimelineEntry) -> None:
        """Adds a summary to the timeline of ``scope``."""
        values = {
            "scope": scope,
            "run": entry.run,
            "at": moment(entry.at),
            "summary": entry.summary,
        }
        with self._store.translate("keep a timeline entry"), self._store.engine.begin() as conn:
            conn.execute(_KEEP_TIMELINE, values)

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
        """The timeline entries of ``scope`` kept between ``since`` and ``until``.

        Those matching the words of ``query`` best first (the newest first among
        equals), or the newest first when ``query`` has no word. ``as_of`` leaves
        out what was kept after it. ValueError when a time is no ISO date or time.
        """
        if limit <= 0:
            return []
        upper = min(
            iso_bound(until, end=True) if until else _LATEST, moment(as_of) if as_of else _LATEST
        )
        values = {
            "scope": scope,
            "since": moment(since) if since else _EARLIEST,
            "until": upper,
            "limit": limit,
        }
        match = self._sql.match(query, scope)
        statement = _TIMELINE_NEWEST
        if match is not None:
            values["match"] = match
            statement = self._sql.timeline_search
        rows = self._read("search the timeline", statement, values)
        return [TimelineEntry(at=at, run=run, summary=summary) for at, run, summary in rows]

    def _retire(self, connection: Connection, scope: str, key: str) -> int:
        """Marks the latest version of ``key`` as no longer so; how many there were (0 or 1)."""
        if self._sql.lock_key is not None:
            connection.execute(self._sql.lock_key, {"scope": scope, "key": key})
        return int(connection.execute(_RETIRE, {"scope": scope, "key": key}).rowcount)

    def _read(self, action: str, statement: TextClause, values: dict[str, Any]) -> list[Any]:
        with self._store.translate(action), self._store.engine.connect() as connection:
            return list(connection.execute(statement, values).all())


def _create(store: SqlStore, ddl: tuple[str, ...]) -> None:
    """The memory tables and their search, made if missing.

    Two processes opening a new store together may both try; the one that
    lost (its transaction refused) tries again and finds them made.
    """
    try:
        _create_once(store, ddl)
    except SQLAlchemyError:
        _create_once(store, ddl)


def _create_once(store: SqlStore, ddl: tuple[str, ...]) -> None:
    with store.engine.begin() as connection:
        METADATA.create_all(connection, tables=[ENTRIES, TIMELINE])
        for statement in ddl:
            connection.execute(text(statement))


def _row(
    scope: str, key: str, content: str, importance: float, run: str, *, gone: bool
) -> dict[str, Any]:
    return {
        "scope": scope,
        "key": key,
        "content": content,
        "importance": importance,
        "run": run,
        "at": moment(),
        "gone": gone,
        "latest": not gone,
    }


def _entry(row: Any) -> MemoryEntry:
    key, content, importance = row
    return MemoryEntry(key=key, content=content, importance=importance)
