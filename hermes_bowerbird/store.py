"""Store: the one place that holds SQL; every read and write of the database goes through it."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import db
from .errors import DatabaseError, InvalidInputError, NotFoundError
from .explain import is_read_only, sqlite_cause
from .types import (
    AuditAction,
    AuditEntry,
    Bulletin,
    Clock,
    Edge,
    Entity,
    Episode,
    ItemKind,
    JournalEntry,
    JournalStatus,
    Memory,
    MemoryType,
    NewMemory,
    Provenance,
    Relation,
    Source,
)

log = logging.getLogger(__name__)

_MEMORY_COLUMNS = ("id, scope, type, content, summary, subject, importance, confidence, access_count, "
                   "created_at, updated_at, accessed_at, valid_from, valid_until, superseded_by, forgotten, "
                   "source, session_id, tags, metadata")
_EPISODE_COLUMNS = "id, scope, session_id, turn_index, chunk_index, role, content, created_at, journal_id"
_JOURNAL_COLUMNS = ("id, scope, session_id, turn_index, platform, user_content, assistant_content, created_at, "
                    "status, source, attempts")
# bm25 column weights: content, summary, tags
_MEMORY_FTS_WEIGHTS = (1.0, 0.6, 0.4)
_FTS_TOKEN = re.compile(r"\w+", re.UNICODE)
_MAX_FTS_TERMS = 32
# How SQLite words a MATCH expression FTS5 cannot parse (as opposed to a busy or damaged database)
_FTS_SYNTAX_ERRORS = ("fts5:", "no such column", "unknown special query", "unterminated string")
_SQL_VARS = 900  # stay under SQLite's bound-parameter limit
_TYPE_OF = {str(t): t for t in MemoryType}
_SOURCE_OF = {str(s): s for s in Source}
T = TypeVar("T")


def content_hash(text: str) -> str:
    """Hash of normalised text (case and whitespace folded): the identity used for exact dedup."""
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()


def fts_match_expression(text: str, *, prefix_min: int = 0, operator: str = "OR") -> str | None:
    """Turn arbitrary text into a safe FTS5 MATCH expression of quoted terms (None when nothing is left).

    Every term is a bare word run wrapped in double quotes, so FTS5 syntax in the input (quotes, `*`, `NEAR(`,
    `-`, parentheses, column filters) is never interpreted. Terms at least `prefix_min` long match as prefixes.
    """
    terms: list[str] = []
    for token in _FTS_TOKEN.findall(text[:20_000]):
        token = token.lower()
        if token not in terms:
            terms.append(token)
        if len(terms) >= _MAX_FTS_TERMS:
            break
    if not terms:
        return None
    parts = [f'"{t}"*' if prefix_min and len(t) >= prefix_min else f'"{t}"' for t in terms]
    return f" {operator} ".join(parts)


def _vector_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def _chunks(items: Sequence[Any], size: int = _SQL_VARS) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class Store:
    """A migrated SQLite database; thread-safe through one connection guarded by a re-entrant lock."""

    def __init__(self, conn: sqlite3.Connection, path: Path, clock: Clock = time.time) -> None:
        self._conn = conn
        self._lock = threading.RLock()
        self.path = path
        self.clock = clock
        self.readonly = False  # opened read-only: reads work, the read path skips its bookkeeping writes

    @classmethod
    def open(cls, path: Path | str, *, clock: Clock = time.time, readonly: bool = False) -> Store:
        """Open or create the database at `path` and apply pending migrations.

        An existing store whose file or folder cannot be written opens read-only instead of failing.
        """
        path = Path(path)
        if readonly or (str(path) != ":memory:" and not db.file_writable(path)):
            return cls._open_read_only(path, clock)
        try:
            conn = db.connect(path)
        except (DatabaseError, OSError) as exc:
            if not (path.is_file() and _cannot_write(exc)):
                raise
            log.info("cannot write %s (%s): opening it read-only", path, exc)
            return cls._open_read_only(path, clock)
        try:
            db.migrate(conn)
        except Exception:
            conn.close()
            raise
        return cls(conn, path, clock)

    @classmethod
    def _open_read_only(cls, path: Path, clock: Clock) -> Store:
        conn = db.connect_read_only(path)
        try:
            pending = db.pending_migrations(conn)
        except Exception:
            conn.close()
            raise
        if pending:
            conn.close()
            raise DatabaseError(f"the database {path} is read-only and needs an upgrade ({', '.join(pending)}); "
                                "open it once with write access")
        store = cls(conn, path, clock)
        store.readonly = True
        return store

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- plumbing -------------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several writes atomically; nested use joins the outer transaction.

        The write lock is taken at BEGIN (IMMEDIATE), so every read inside sees what the transaction will
        change; a busy database is waited for under the one busy policy (db.busy_retry).
        """
        with self._lock:
            if self._guarded(lambda: self._conn.in_transaction):
                yield
                return
            self._guarded(lambda: db.retry_busy(lambda: self._conn.execute("BEGIN IMMEDIATE")))
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            db.retry_busy(lambda: self._conn.execute("COMMIT"))

    def _guarded(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except sqlite3.ProgrammingError as exc:
            raise DatabaseError(f"database is closed or misused: {exc}") from exc

    def _execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        """One statement under the lock; outside a transaction a busy database is retried (it failed whole)."""
        with self._lock:
            if self._guarded(lambda: self._conn.in_transaction):
                return self._guarded(lambda: self._conn.execute(sql, params))
            return self._guarded(lambda: db.retry_busy(lambda: self._conn.execute(sql, params)))

    def _query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple[Any, ...]]:
        """All rows, fetched while the lock is held (a cursor read later could see another thread's work)."""
        with self._lock:
            return self._execute(sql, params).fetchall()

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self._query(sql, params)
        return rows[0][0] if rows else None

    # -- memories -------------------------------------------------------------------------------------------
    def insert_memory(self, new: NewMemory, *, actor: str = "", reason: str = "created") -> Memory:
        """Store a new memory with its provenance and an audit row, atomically."""
        if not new.content.strip():
            raise InvalidInputError("memory content is empty")
        now = self.clock()
        importance = min(1.0, max(0.0, new.effective_importance))
        with self.transaction():
            cur = self._execute(
                "INSERT INTO memories (scope, type, content, summary, subject, content_hash, importance, "
                "confidence, created_at, updated_at, valid_from, source, session_id, tags, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (new.scope, str(new.type), new.content, new.summary, new.subject, content_hash(new.content),
                 importance, min(1.0, max(0.0, new.confidence)), new.created_at or now, now,
                 new.valid_from or new.created_at or now,
                 str(new.source), new.session_id, json.dumps(list(new.tags)), json.dumps(dict(new.metadata))))
            memory_id = int(cur.lastrowid or 0)
            self.add_provenance(memory_id, new.provenance)
            self.add_audit(memory_id, AuditAction.CREATE, reason, actor or str(new.source),
                           {"type": str(new.type)})
        return self.require_memory(memory_id)

    def get_memory(self, memory_id: int) -> Memory | None:
        rows = self._query(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,))
        return _memory(rows[0]) if rows else None

    def require_memory(self, memory_id: int, scopes: Sequence[str] | None = None) -> Memory:
        """The memory, or NotFoundError if it does not exist or is outside the given scopes."""
        memory = self.get_memory(memory_id)
        if memory is None or (scopes is not None and memory.scope not in scopes):
            raise NotFoundError(f"no memory with id {memory_id}")
        return memory

    def get_memories(self, ids: Iterable[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            rows = self._query(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id IN ({_marks(len(chunk))})",
                               chunk)
            out.update((row[0], _memory(row)) for row in rows)
        return out

    def find_by_hash(self, scope: str, text: str, *, include_forgotten: bool = False) -> Memory | None:
        """A memory of `scope` with the same normalised content (live ones only unless asked)."""
        live = "" if include_forgotten else " AND forgotten = 0"
        rows = self._query(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = ? AND content_hash = ?{live} "
                           "ORDER BY id DESC LIMIT 1", (scope, content_hash(text)))
        return _memory(rows[0]) if rows else None

    def find_containing(self, scope: str, text: str, limit: int = 5) -> list[Memory]:
        """Live, current memories of `scope` whose content contains `text` verbatim, newest first."""
        rows = self._query(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = ? AND forgotten = 0 "
                           "AND superseded_by IS NULL AND instr(content, ?) > 0 ORDER BY id DESC LIMIT ?",
                           (scope, text, limit))
        return [_memory(r) for r in rows]

    def current_by_subject(self, scope: str, subject: str) -> list[Memory]:
        """Live, not superseded memories of `scope` about `subject`, newest first."""
        rows = self._query(f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = ? AND subject = ? "
                           "AND forgotten = 0 AND superseded_by IS NULL ORDER BY created_at DESC, id DESC",
                           (scope, subject))
        return [_memory(r) for r in rows]

    def list_memories(self, scopes: Sequence[str] | None = None, *, types: Sequence[MemoryType] = (),
                      include_forgotten: bool = False, current_only: bool = False,
                      since: float | None = None, until: float | None = None,
                      order: str = "recent", limit: int | None = None, after_id: int = 0) -> list[Memory]:
        """Filtered listing; `order` is recent (newest first), oldest, or importance."""
        where, params = self._memory_filter(scopes, types, include_forgotten, current_only, since, until)
        if after_id:
            where.append("id > ?")
            params.append(after_id)
        order_sql = {"recent": "created_at DESC, id DESC", "oldest": "id ASC",
                     "importance": "importance DESC, created_at DESC"}[order]
        sql = f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} ORDER BY {order_sql}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_memory(r) for r in self._query(sql, params)]

    def _memory_filter(self, scopes: Sequence[str] | None, types: Sequence[MemoryType], include_forgotten: bool,
                       current_only: bool, since: float | None, until: float | None
                       ) -> tuple[list[str], list[Any]]:
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if scopes is not None:
            where.append(f"scope IN ({_marks(len(scopes))})")
            params.extend(scopes)
        if types:
            where.append(f"type IN ({_marks(len(types))})")
            params.extend(str(t) for t in types)
        if not include_forgotten:
            where.append("forgotten = 0")
        if current_only:
            where.append("superseded_by IS NULL AND (valid_until IS NULL OR valid_until > ?)")
            params.append(self.clock())
        if since is not None:
            where.append("created_at >= ?")
            params.append(since)
        if until is not None:
            where.append("created_at < ?")
            params.append(until)
        return where, params

    def count_memories(self, scopes: Sequence[str] | None = None) -> dict[str, int]:
        """Live memory counts by type (forgotten ones excluded)."""
        where, params = self._memory_filter(scopes, (), False, False, None, None)
        rows = self._query(f"SELECT type, count(*) FROM memories WHERE {' AND '.join(where)} GROUP BY type",
                           params)
        return {t: n for t, n in rows}

    def memory_scopes(self) -> dict[str, int]:
        """Every scope that holds memories, with its count of live ones (forgotten ones excluded)."""
        rows = self._query("""
            SELECT scope, sum(forgotten = 0) FROM memories
            GROUP BY scope ORDER BY scope
        """)
        return {scope: int(n) for scope, n in rows}

    def live_memory_ids(self, scopes: Sequence[str] | None = None) -> set[int]:
        where, params = self._memory_filter(scopes, (), False, False, None, None)
        return {r[0] for r in self._query(f"SELECT id FROM memories WHERE {' AND '.join(where)}", params)}

    def touch(self, ids: Sequence[int]) -> None:
        """Record that these memories were recalled (access count and time feed the access boost).

        Bookkeeping only: a read-only or busy store skips it, so a read never fails for it.
        """
        if not ids or self.readonly:
            return
        now = self.clock()
        try:
            with self.transaction():
                for chunk in _chunks(list(ids)):
                    self._execute(f"UPDATE memories SET access_count = access_count + 1, accessed_at = ? "
                                  f"WHERE id IN ({_marks(len(chunk))})", (now, *chunk))
        except sqlite3.OperationalError as exc:
            log.warning("access counts not updated (%s); the recall itself is unaffected", exc)

    def reinforce(self, memory_id: int, provenance: Sequence[Provenance], *, reason: str, actor: str,
                  importance: float | None = None) -> None:
        """A near-duplicate arrived: boost access, extend provenance, optionally raise importance."""
        now = self.clock()
        with self.transaction():
            self._execute("UPDATE memories SET access_count = access_count + 1, accessed_at = ?, "
                          "importance = max(importance, coalesce(?, importance)) WHERE id = ?",
                          (now, importance, memory_id))
            self.add_provenance(memory_id, provenance)
            self.add_audit(memory_id, AuditAction.MERGE, reason, actor)

    def set_origin(self, memory_id: int, origin: str, *, confidence: float, reason: str, actor: str) -> None:
        """A stronger source stated a memory again: record that origin and raise its confidence."""
        with self.transaction():
            self._execute("""
                UPDATE memories
                SET metadata = json_set(coalesce(metadata, '{}'), '$.origin', ?),
                    confidence = max(confidence, ?), updated_at = ?
                WHERE id = ?""", (origin, confidence, self.clock(), memory_id))
            self.add_audit(memory_id, AuditAction.UPDATE, reason, actor, {"origin": origin})

    def supersede(self, old_id: int, new_id: int, *, reason: str, actor: str) -> None:
        """Mark `old_id` as no longer current: valid_until now, superseded_by new, an `updates` edge new->old."""
        now = self.clock()
        with self.transaction():
            self._execute("UPDATE memories SET valid_until = coalesce(valid_until, ?), superseded_by = ?, "
                          "updated_at = ? WHERE id = ?", (now, new_id, now, old_id))
            self.add_edge(new_id, old_id, Relation.UPDATES, 1.0)
            self.add_audit(old_id, AuditAction.SUPERSEDE, reason, actor, {"superseded_by": new_id})

    def forget(self, memory_id: int, *, reason: str, actor: str) -> None:
        """Soft-delete: the row stays (audit, provenance) but search and listings skip it."""
        now = self.clock()
        with self.transaction():
            self._execute("UPDATE memories SET forgotten = 1, forgotten_at = ?, updated_at = ? WHERE id = ?",
                          (now, now, memory_id))
            self.add_audit(memory_id, AuditAction.FORGET, reason, actor)

    def restore(self, memory_id: int, *, reason: str, actor: str) -> None:
        with self.transaction():
            self._execute("UPDATE memories SET forgotten = 0, forgotten_at = NULL, low_since = NULL, "
                          "updated_at = ? WHERE id = ?", (self.clock(), memory_id))
            self.add_audit(memory_id, AuditAction.RESTORE, reason, actor)

    def set_importance(self, memory_id: int, importance: float, *, reason: str, actor: str) -> None:
        with self.transaction():
            self._execute("UPDATE memories SET importance = ?, updated_at = ? WHERE id = ?",
                          (min(1.0, max(0.0, importance)), self.clock(), memory_id))
            self.add_audit(memory_id, AuditAction.UPDATE, reason, actor, {"importance": importance})

    def set_low_since(self, updates: Sequence[tuple[int, float | None]]) -> None:
        """Record (or clear, with None) since when a memory's effective importance has been below threshold."""
        with self.transaction():
            for memory_id, since in updates:
                self._execute("UPDATE memories SET low_since = ? WHERE id = ?", (since, memory_id))

    def low_since(self, ids: Sequence[int]) -> dict[int, float | None]:
        out: dict[int, float | None] = {}
        for chunk in _chunks(list(ids)):
            out.update(self._query(f"SELECT id, low_since FROM memories WHERE id IN ({_marks(len(chunk))})",
                                   chunk))
        return out

    def memory_heads(self, types: Sequence[MemoryType], *, after_id: int = 0, limit: int = 5_000) -> list[Memory]:
        """Live memories of these types in id order, without content, summary, tags or metadata (those are left
        empty): the cheap view whole-store scans such as decay use."""
        rows = self._query("SELECT id, scope, type, subject, importance, confidence, access_count, created_at, "
                           "updated_at, accessed_at, valid_until, superseded_by, source FROM memories "
                           f"WHERE forgotten = 0 AND type IN ({_marks(len(types))}) AND id > ? ORDER BY id LIMIT ?",
                           (*[str(t) for t in types], after_id, limit))
        return [Memory(id=r[0], scope=r[1], type=_TYPE_OF[r[2]], content="", subject=r[3], importance=r[4],
                       confidence=r[5], access_count=r[6], created_at=r[7], updated_at=r[8], accessed_at=r[9],
                       valid_until=r[10], superseded_by=r[11], source=_SOURCE_OF[r[12]]) for r in rows]

    def low_marked(self) -> dict[int, float]:
        """Live memories that carry a low-importance mark, with the time it was set."""
        return {int(i): float(t) for i, t in self._query(
            "SELECT id, low_since FROM memories WHERE low_since IS NOT NULL AND forgotten = 0")}

    def forgotten_before(self, cutoff: float, limit: int = 10_000) -> list[int]:
        """Ids of memories soft-forgotten before `cutoff`, oldest first (the ones a purge may delete)."""
        rows = self._query("SELECT id FROM memories WHERE forgotten = 1 AND forgotten_at < ? "
                           "ORDER BY forgotten_at LIMIT ?", (cutoff, limit))
        return [int(r[0]) for r in rows]

    def purge(self, memory_id: int, *, reason: str, actor: str) -> None:
        """Hard-delete a forgotten memory; its audit trail stays."""
        with self.transaction():
            self._execute("DELETE FROM embeddings WHERE kind = 'memory' AND item_id = ?", (memory_id,))
            self._execute("DELETE FROM memories WHERE id = ? AND forgotten = 1", (memory_id,))
            self.add_audit(memory_id, AuditAction.PURGE, reason, actor)

    def scrub_deleted(self) -> None:
        """After hard deletes: rewrite the full-text indexes without the deleted rows' words, then checkpoint and
        truncate the WAL. With secure_delete on (db.connect) the freed pages are zeroed, so no deleted text
        lingers in the file; a checkpoint blocked by a reader leaves the WAL for the next one."""
        with self.transaction():
            self._execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            self._execute("INSERT INTO episodes_fts (episodes_fts) VALUES ('optimize')")
        busy, _, _ = self._query("PRAGMA wal_checkpoint(TRUNCATE)")[0]
        if busy:
            log.info("the WAL is still in use by a reader; deleted pages leave it at a later checkpoint")

    # -- provenance -----------------------------------------------------------------------------------------
    def add_provenance(self, memory_id: int, provenance: Sequence[Provenance]) -> None:
        with self.transaction():
            for p in provenance:
                self._execute("INSERT OR IGNORE INTO memory_provenance (memory_id, session_id, turn_index) "
                              "VALUES (?, ?, ?)", (memory_id, p.session_id, p.turn_index))

    def provenance(self, memory_ids: Sequence[int]) -> dict[int, list[Provenance]]:
        """Source turns of each memory, in capture order."""
        out: dict[int, list[Provenance]] = {i: [] for i in memory_ids}
        for chunk in _chunks(list(memory_ids)):
            rows = self._query("SELECT p.memory_id, p.session_id, p.turn_index FROM memory_provenance p "
                               "LEFT JOIN journal j ON j.session_id = p.session_id "
                               "AND j.turn_index = p.turn_index "
                               f"WHERE p.memory_id IN ({_marks(len(chunk))}) "
                               "GROUP BY p.memory_id, p.session_id, p.turn_index "
                               "ORDER BY p.memory_id, min(coalesce(j.id, 0)), p.turn_index", chunk)
            for memory_id, session_id, turn_index in rows:
                out[memory_id].append(Provenance(session_id, turn_index))
        return out

    # -- episodes -------------------------------------------------------------------------------------------
    def insert_episode(self, *, scope: str, session_id: str, turn_index: int, chunk_index: int, role: str,
                       content: str, created_at: float | None = None, journal_id: int | None = None) -> int:
        """Store one verbatim chunk; re-inserting the same (session, turn, role, chunk) returns the old id."""
        with self.transaction():
            self._execute("INSERT OR IGNORE INTO episodes (scope, session_id, turn_index, chunk_index, role, "
                          "content, created_at, journal_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (scope, session_id, turn_index, chunk_index, role, content,
                           created_at if created_at is not None else self.clock(), journal_id))
            return int(self._scalar("SELECT id FROM episodes WHERE scope = ? AND session_id = ? AND "
                                    "turn_index = ? AND role = ? AND chunk_index = ?",
                                    (scope, session_id, turn_index, role, chunk_index)))

    def get_episodes(self, ids: Iterable[int]) -> dict[int, Episode]:
        out: dict[int, Episode] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            rows = self._query(f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id IN ({_marks(len(chunk))})",
                               chunk)
            out.update((r[0], Episode(*r)) for r in rows)
        return out

    def list_episodes(self, scopes: Sequence[str] | None = None, *, session_id: str | None = None,
                      limit: int | None = None) -> list[Episode]:
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if scopes is not None:
            where.append(f"scope IN ({_marks(len(scopes))})")
            params.extend(scopes)
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        sql = (f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE {' AND '.join(where)} "
               "ORDER BY session_id, turn_index, role, chunk_index")
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [Episode(*r) for r in self._query(sql, params)]

    def delete_episodes_before(self, cutoff: float) -> list[int]:
        """Delete episodes (and their stored vectors) created before `cutoff`; returns their ids."""
        with self.transaction():
            ids = [int(r[0]) for r in self._query("SELECT id FROM episodes WHERE created_at < ?", (cutoff,))]
            self._execute("DELETE FROM embeddings WHERE kind = 'episode' AND item_id IN "
                          "(SELECT id FROM episodes WHERE created_at < ?)", (cutoff,))
            self._execute("DELETE FROM episodes WHERE created_at < ?", (cutoff,))
            return ids

    # -- full-text search -----------------------------------------------------------------------------------
    def search_memories_fts(self, match: str, scopes: Sequence[str], limit: int = 50,
                            *, current_only: bool = False) -> list[tuple[int, float]]:
        """(memory id, bm25 score: higher is better) for a MATCH expression from fts_match_expression."""
        extra = " AND m.superseded_by IS NULL" if current_only else ""
        sql = ("SELECT m.id, -bm25(memories_fts, ?, ?, ?) AS score FROM memories_fts "
               "JOIN memories m ON m.id = memories_fts.rowid "
               f"WHERE memories_fts MATCH ? AND m.forgotten = 0 AND m.scope IN ({_marks(len(scopes))}){extra} "
               "ORDER BY score DESC LIMIT ?")
        return self._fts(sql, (*_MEMORY_FTS_WEIGHTS, match, *scopes, limit))

    def search_episodes_fts(self, match: str, scopes: Sequence[str], limit: int = 50) -> list[tuple[int, float]]:
        sql = ("SELECT e.id, -bm25(episodes_fts) AS score FROM episodes_fts "
               "JOIN episodes e ON e.id = episodes_fts.rowid "
               f"WHERE episodes_fts MATCH ? AND e.scope IN ({_marks(len(scopes))}) "
               "ORDER BY score DESC LIMIT ?")
        return self._fts(sql, (match, *scopes, limit))

    def corpus_size(self) -> int:
        """Highest episode id plus highest memory id: a cheap upper bound on the documents both full-text indexes
        hold (deleted rows leave gaps), used as N in inverse document frequencies."""
        return int(self._scalar("SELECT (SELECT coalesce(max(id), 0) FROM episodes) "
                                "+ (SELECT coalesce(max(id), 0) FROM memories)"))

    def term_document_counts(self, words: Sequence[str], cap: int = 10_000) -> dict[str, int]:
        """In how many episodes plus memories each word occurs (as full-text search matches it: stemmed), each
        table's count stopping at `cap` so a very common word costs a bounded scan."""
        out: dict[str, int] = {}
        for word in words:
            match = fts_match_expression(word)
            if match is None:
                continue
            total = 0
            for table in ("episodes_fts", "memories_fts"):
                sql = f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)"
                try:
                    total += int(self._scalar(sql, (match, cap)))
                except sqlite3.OperationalError as exc:
                    log.warning("full-text count rejected by SQLite: %s", exc)
            out[word] = total
        return out

    def _fts(self, sql: str, params: Sequence[Any]) -> list[tuple[int, float]]:
        """Run a full-text query. An expression FTS5 cannot parse is the caller's bug (expressions come from
        fts_match_expression, which quotes every term) and raises InvalidInputError; any other SQLite failure
        is logged and gives no rows, so a busy or damaged index costs the keyword signal, never the search."""
        try:
            return [(int(i), float(s)) for i, s in self._query(sql, params)]
        except sqlite3.OperationalError as exc:
            if str(exc).startswith(_FTS_SYNTAX_ERRORS):
                raise InvalidInputError(f"not a full-text expression FTS5 accepts ({exc}); "
                                        "build it with fts_match_expression") from exc
            log.warning("full-text query failed, searching without it: %s", exc)
            return []

    def fts_integrity(self) -> dict[str, bool]:
        """Run FTS5's integrity-check on both indexes (True = consistent)."""
        out = {}
        for table in ("memories_fts", "episodes_fts"):
            try:
                self._execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
                out[table] = True
            except sqlite3.DatabaseError as exc:
                if is_read_only(exc):  # the check is written as an INSERT: a read-only store cannot run it
                    continue
                out[table] = False
        return out

    def rebuild_fts(self) -> list[str]:
        """Rebuild both full-text indexes from their tables, then merge their segments (sqlite-utils does both)."""
        tables = ["memories_fts", "episodes_fts"]
        with self.transaction():
            handle = db.wrap(self._conn)
            for table in tables:
                handle.table(table).rebuild_fts().optimize()
        return tables

    # -- entities -------------------------------------------------------------------------------------------
    def upsert_entity(self, scope: str, name: str, norm: str, kind: str = "thing") -> int:
        with self.transaction():
            self._execute("INSERT OR IGNORE INTO entities (scope, name, norm, kind, created_at) "
                          "VALUES (?, ?, ?, ?, ?)", (scope, name, norm, kind, self.clock()))
            return int(self._scalar("SELECT id FROM entities WHERE scope = ? AND norm = ?", (scope, norm)))

    def link_memory_entities(self, memory_id: int, entity_ids: Iterable[int]) -> None:
        with self.transaction():
            for entity_id in entity_ids:
                self._execute("INSERT OR IGNORE INTO memory_entities (memory_id, entity_id) VALUES (?, ?)",
                              (memory_id, entity_id))

    def link_episode_entities(self, episode_id: int, entity_ids: Iterable[int]) -> None:
        with self.transaction():
            for entity_id in entity_ids:
                self._execute("INSERT OR IGNORE INTO episode_entities (episode_id, entity_id) VALUES (?, ?)",
                              (episode_id, entity_id))

    def entity_norms(self, scopes: Sequence[str]) -> dict[str, int]:
        """Every entity name and alias (normalised) known in these scopes, mapped to entity id."""
        marks = _marks(len(scopes))
        rows = self._query(f"SELECT norm, id FROM entities WHERE scope IN ({marks}) UNION ALL "
                           "SELECT a.norm, a.entity_id FROM entity_aliases a JOIN entities e "
                           f"ON e.id = a.entity_id WHERE e.scope IN ({marks})", (*scopes, *scopes))
        return {norm: entity_id for norm, entity_id in rows}

    def entity_stamp(self) -> tuple[int, int]:
        """(highest entity id, alias count): changes whenever an entity or alias is added (cache key)."""
        row = self._query("SELECT (SELECT coalesce(max(id), 0) FROM entities), "
                          "(SELECT count(*) FROM entity_aliases)")[0]
        return int(row[0]), int(row[1])

    def scoped_ids_after(self, kind: ItemKind, scopes: Sequence[str], after_id: int = 0) -> list[int]:
        """Ids of memories (any state) or episodes in these scopes with id > after_id, ascending."""
        table = "memories" if kind is ItemKind.MEMORY else "episodes"
        rows = self._query(f"SELECT id FROM {table} WHERE id > ? AND scope IN ({_marks(len(scopes))}) "
                           "ORDER BY id", (after_id, *scopes))
        return [int(r[0]) for r in rows]

    def get_entities(self, ids: Iterable[int]) -> dict[int, Entity]:
        out: dict[int, Entity] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            rows = self._query("SELECT id, scope, name, kind FROM entities "
                               f"WHERE id IN ({_marks(len(chunk))})", chunk)
            out.update((r[0], Entity(*r)) for r in rows)
        return out

    def entities_of_memories(self, memory_ids: Sequence[int]) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for chunk in _chunks(list(memory_ids)):
            for memory_id, entity_id in self._query(
                    "SELECT memory_id, entity_id FROM memory_entities "
                    f"WHERE memory_id IN ({_marks(len(chunk))})", chunk):
                out.setdefault(memory_id, []).append(entity_id)
        return out

    def memories_for_entities(self, entity_ids: Sequence[int], scopes: Sequence[str],
                              limit: int = 200) -> list[tuple[int, int]]:
        """(memory id, entity id) for live memories in scope that mention any of the entities."""
        if not entity_ids:
            return []
        rows = self._query("SELECT me.memory_id, me.entity_id FROM memory_entities me "
                           "JOIN memories m ON m.id = me.memory_id "
                           f"WHERE me.entity_id IN ({_marks(len(entity_ids))}) AND m.forgotten = 0 "
                           f"AND m.scope IN ({_marks(len(scopes))}) ORDER BY m.created_at DESC LIMIT ?",
                           (*entity_ids, *scopes, limit))
        return [(int(a), int(b)) for a, b in rows]

    def episodes_for_entities(self, entity_ids: Sequence[int], scopes: Sequence[str],
                              limit: int = 200) -> list[tuple[int, int]]:
        if not entity_ids:
            return []
        rows = self._query("SELECT ee.episode_id, ee.entity_id FROM episode_entities ee "
                           "JOIN episodes e ON e.id = ee.episode_id "
                           f"WHERE ee.entity_id IN ({_marks(len(entity_ids))}) "
                           f"AND e.scope IN ({_marks(len(scopes))}) ORDER BY e.created_at DESC LIMIT ?",
                           (*entity_ids, *scopes, limit))
        return [(int(a), int(b)) for a, b in rows]

    def subject_keys(self, scopes: Sequence[str]) -> set[str]:
        """The distinct subjects of live memories in these scopes."""
        if not scopes:
            return set()
        return {r[0] for r in self._query(f"SELECT DISTINCT subject FROM memories WHERE scope IN "
                                          f"({_marks(len(scopes))}) AND subject IS NOT NULL AND forgotten = 0",
                                          scopes)}

    def memories_by_subject(self, scopes: Sequence[str], subjects: Sequence[str], limit: int = 50) -> list[int]:
        """Ids of live memories in scope about any of `subjects`: not superseded ones first, then newest first."""
        if not subjects or not scopes:
            return []
        rows = self._query(f"SELECT id FROM memories WHERE scope IN ({_marks(len(scopes))}) "
                           f"AND subject IN ({_marks(len(subjects))}) AND forgotten = 0 "
                           "ORDER BY superseded_by IS NOT NULL, created_at DESC, id DESC LIMIT ?",
                           (*scopes, *subjects, limit))
        return [int(r[0]) for r in rows]

    def memories_from_episodes(self, episode_ids: Sequence[int]) -> dict[int, list[int]]:
        """Episode id -> ids of live memories of the same scope extracted from that episode's turn."""
        out: dict[int, list[int]] = {}
        for chunk in _chunks(list(episode_ids)):
            # CROSS JOIN fixes the loop order (episode -> its turn's provenance -> memory): left to choose, the
            # planner scanned every live memory of the scope per episode (86 ms for 100 episodes at 10K items)
            rows = self._query("SELECT e.id, p.memory_id FROM episodes e CROSS JOIN memory_provenance p "
                               "ON p.session_id = e.session_id AND p.turn_index = e.turn_index "
                               "CROSS JOIN memories m ON m.id = p.memory_id AND m.scope = e.scope "
                               "AND m.forgotten = 0 "
                               f"WHERE e.id IN ({_marks(len(chunk))})", chunk)
            for episode_id, memory_id in rows:
                out.setdefault(int(episode_id), []).append(int(memory_id))
        return out

    def stale_memory_ids(self, ids: Iterable[int], now: float) -> set[int]:
        """Those of these memories that are no longer current (forgotten, superseded or expired at `now`)."""
        out: set[int] = set()
        for chunk in _chunks(list(dict.fromkeys(ids))):
            rows = self._query(
                f"""
                SELECT id FROM memories
                WHERE id IN ({_marks(len(chunk))})
                  AND (forgotten != 0 OR superseded_by IS NOT NULL
                       OR (valid_until IS NOT NULL AND valid_until <= ?))
                """, (*chunk, now))
            out.update(int(row[0]) for row in rows)
        return out

    # -- edges ----------------------------------------------------------------------------------------------
    def add_edge(self, src_id: int, dst_id: int, relation: Relation, weight: float = 1.0,
                 *, actor: str = "", reason: str = "") -> Edge:
        """Create or strengthen a typed edge (the stronger weight wins)."""
        if src_id == dst_id:
            raise InvalidInputError("an edge needs two different memories")
        with self.transaction():
            self._execute("INSERT INTO edges (src_id, dst_id, relation, weight, created_at) VALUES (?, ?, ?, ?, ?) "
                          "ON CONFLICT (src_id, dst_id, relation) DO UPDATE SET weight = max(weight, excluded.weight)",
                          (src_id, dst_id, str(relation), weight, self.clock()))
            if actor:
                self.add_audit(src_id, AuditAction.RELATE, reason or str(relation), actor,
                               {"relation": str(relation), "target": dst_id})
            row = self._query("SELECT id, src_id, dst_id, relation, weight, created_at FROM edges "
                              "WHERE src_id = ? AND dst_id = ? AND relation = ?",
                              (src_id, dst_id, str(relation)))[0]
        return _edge(row)

    def edges_of(self, memory_ids: Sequence[int]) -> list[Edge]:
        """Edges touching any of the memories, in either direction."""
        out: dict[int, Edge] = {}
        for chunk in _chunks(list(memory_ids), _SQL_VARS // 2):
            marks = _marks(len(chunk))
            rows = self._query("SELECT id, src_id, dst_id, relation, weight, created_at FROM edges "
                               f"WHERE src_id IN ({marks}) OR dst_id IN ({marks})", (*chunk, *chunk))
            out.update((r[0], _edge(r)) for r in rows)
        return list(out.values())

    def orphan_counts(self) -> dict[str, int]:
        """Rows pointing at nothing (foreign keys are on, so only damage or old files produce these)."""
        checks = {
            "edges": "SELECT count(*) FROM edges WHERE src_id NOT IN (SELECT id FROM memories) "
                     "OR dst_id NOT IN (SELECT id FROM memories)",
            "memory_vectors": "SELECT count(*) FROM embeddings WHERE kind = 'memory' "
                              "AND item_id NOT IN (SELECT id FROM memories)",
            "episode_vectors": "SELECT count(*) FROM embeddings WHERE kind = 'episode' "
                               "AND item_id NOT IN (SELECT id FROM episodes)",
        }
        return {name: int(self._scalar(sql)) for name, sql in checks.items()}

    def delete_orphans(self) -> int:
        with self.transaction():
            n = self._execute("DELETE FROM edges WHERE src_id NOT IN (SELECT id FROM memories) "
                              "OR dst_id NOT IN (SELECT id FROM memories)").rowcount
            n += self._execute("DELETE FROM embeddings WHERE (kind = 'memory' AND item_id NOT IN "
                               "(SELECT id FROM memories)) OR (kind = 'episode' AND item_id NOT IN "
                               "(SELECT id FROM episodes))").rowcount
        return n

    # -- vectors and the embedding cache --------------------------------------------------------------------
    def put_vectors(self, kind: ItemKind, model: str, items: Sequence[tuple[int, np.ndarray]]) -> None:
        with self.transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings (kind, item_id, model, dim, vector) VALUES (?, ?, ?, ?, ?)",
                [(str(kind), int(i), model, int(v.shape[-1]), _vector_blob(v)) for i, v in items])

    def delete_vectors(self, kind: ItemKind, ids: Sequence[int]) -> None:
        with self.transaction():
            for chunk in _chunks(list(ids)):
                self._execute(f"DELETE FROM embeddings WHERE kind = ? AND item_id IN ({_marks(len(chunk))})",
                              (str(kind), *chunk))

    def load_vectors(self, kind: ItemKind, model: str) -> tuple[np.ndarray, np.ndarray]:
        """All stored vectors of one kind and model: (int64 ids, float32 matrix of shape n x dim)."""
        rows = self._query("SELECT item_id, dim, vector FROM embeddings WHERE kind = ? AND model = ? "
                           "ORDER BY item_id", (str(kind), model))
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        dims = {r[1] for r in rows}
        if len(dims) != 1:
            raise DatabaseError(f"stored {kind} vectors for {model} have mixed dimensions {sorted(dims)}")
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4")
        return ids, flat.reshape(len(rows), dims.pop()).astype(np.float32, copy=False)

    def get_vectors(self, kind: ItemKind, ids: Sequence[int]) -> dict[int, np.ndarray]:
        out: dict[int, np.ndarray] = {}
        for chunk in _chunks(list(ids), _SQL_VARS - 1):
            rows = self._query("SELECT item_id, vector FROM embeddings WHERE kind = ? "
                               f"AND item_id IN ({_marks(len(chunk))})", (str(kind), *chunk))
            out.update((int(i), np.frombuffer(v, dtype="<f4").astype(np.float32)) for i, v in rows)
        return out

    def vector_span(self, kind: ItemKind, model: str) -> tuple[int, int]:
        """(how many, highest item id) of the stored vectors of one kind and model."""
        count, top = self._query("""
            SELECT count(*), coalesce(max(item_id), 0) FROM embeddings WHERE model = ? AND kind = ?
            """, (model, str(kind)))[0]
        return int(count), int(top)

    def vector_ids(self, kind: ItemKind, model: str) -> np.ndarray:
        """Item ids (int64) of the stored vectors of one kind and model."""
        rows = self._query("SELECT item_id FROM embeddings WHERE model = ? AND kind = ?", (model, str(kind)))
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def vectors_after(self, kind: ItemKind, model: str, after_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Stored vectors of one kind and model with item ids above `after_id`: (int64 ids, float32 matrix)."""
        rows = self._query("""
            SELECT item_id, vector FROM embeddings WHERE model = ? AND kind = ? AND item_id > ? ORDER BY item_id
            """, (model, str(kind), after_id))
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").astype(np.float32)
        return ids, flat.reshape(len(rows), -1) if rows else flat.reshape(0, 0)

    def data_version(self) -> int:
        """SQLite's data_version: changes whenever another connection (another process) commits to the file."""
        return int(self._scalar("PRAGMA data_version"))

    def vector_model_counts(self) -> dict[tuple[str, str, int], int]:
        rows = self._query("SELECT kind, model, dim, count(*) FROM embeddings GROUP BY kind, model, dim")
        return {(k, m, d): n for k, m, d, n in rows}

    def texts_missing_vectors(self, kind: ItemKind, model: str, dim: int, limit: int,
                              after_id: int = 0) -> list[tuple[int, str]]:
        """Items with no vector from this model and dimension (new, or embedded by another model), by id."""
        table = "memories" if kind is ItemKind.MEMORY else "episodes"
        live = " AND t.forgotten = 0" if kind is ItemKind.MEMORY else ""
        rows = self._query(f"SELECT t.id, t.content FROM {table} t LEFT JOIN embeddings e ON e.kind = ? "
                           "AND e.item_id = t.id AND e.model = ? AND e.dim = ? "
                           f"WHERE e.item_id IS NULL AND t.id > ?{live} ORDER BY t.id LIMIT ?",
                           (str(kind), model, dim, after_id, limit))
        return [(int(i), str(c)) for i, c in rows]

    def count_missing_vectors(self, kind: ItemKind, model: str, dim: int) -> int:
        """How many items `texts_missing_vectors` would return without a limit."""
        table = "memories" if kind is ItemKind.MEMORY else "episodes"
        live = " AND t.forgotten = 0" if kind is ItemKind.MEMORY else ""
        return int(self._scalar(f"SELECT count(*) FROM {table} t LEFT JOIN embeddings e ON e.kind = ? "
                                "AND e.item_id = t.id AND e.model = ? AND e.dim = ? "
                                f"WHERE e.item_id IS NULL{live}", (str(kind), model, dim)))

    def cache_get(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for chunk in _chunks(list(hashes)):
            rows = self._query(f"SELECT hash, vector FROM embedding_cache WHERE hash IN ({_marks(len(chunk))})",
                               chunk)
            out.update((h, np.frombuffer(v, dtype="<f4").astype(np.float32)) for h, v in rows)
        return out

    def cache_put(self, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        if self.readonly:
            return
        now = self.clock()
        with self.transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache (hash, model, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)",
                [(h, m, int(v.shape[-1]), _vector_blob(v), now) for h, m, v in rows])

    # -- journal --------------------------------------------------------------------------------------------
    def journal_append(self, *, scope: str, session_id: str, platform: str, user: str, assistant: str,
                       turn_index: int | None = None, source: Source = Source.TURN,
                       created_at: float | None = None) -> int:
        """The whole of turn capture on the caller's thread: one short write transaction; returns the row id.

        The turn index is settled inside the transaction. A requested index that is free is used; one that
        holds this very turn (same user and assistant text) is a replay and returns that row; one taken by
        another turn, or no request, gets the session's next index. Concurrent writers of one session (two
        providers, two processes) therefore all keep their turns.
        """
        created = created_at if created_at is not None else self.clock()
        with self.transaction():
            index = turn_index
            held = None if turn_index is None else self._turn_at(session_id, turn_index)
            if held is not None:
                if content_hash(held[1]) == content_hash(user) and content_hash(held[2]) == content_hash(assistant):
                    return int(held[0])
                index = None
            if index is None:
                index = self._next_turn_index(session_id)
            cur = self._execute("INSERT INTO journal (scope, session_id, turn_index, platform, source, "
                                "user_content, assistant_content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                (scope, session_id, index, platform, str(source), user, assistant, created))
            return int(cur.lastrowid or 0)

    def journal_try_append(self, **row: Any) -> int | None:
        """`journal_append` without waiting: None at once when another thread or process holds the write lock."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._guarded(lambda: self._conn.in_transaction):
                return self.journal_append(**row)  # this thread's own transaction: join it
            self._conn.execute("PRAGMA busy_timeout = 0")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if db.is_busy(exc):
                    return None
                raise
            finally:
                self._conn.execute(f"PRAGMA busy_timeout = {db.BUSY_TIMEOUT_MS}")
            try:
                journal_id = self.journal_append(**row)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            db.retry_busy(lambda: self._conn.execute("COMMIT"))
            return journal_id
        finally:
            self._lock.release()

    def _turn_at(self, session_id: str, turn_index: int) -> tuple[Any, ...] | None:
        """(id, user text, assistant text) of the session's row at this index, if any."""
        rows = self._query("SELECT id, user_content, assistant_content FROM journal "
                           "WHERE session_id = ? AND turn_index = ?", (session_id, turn_index))
        return rows[0] if rows else None

    def journal_append_many(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Journal many turns at once (an import): sqlite-utils batches the INSERTs inside one transaction.

        Each row has the columns of journal_append (scope, session_id, turn_index, platform, source,
        user_content, assistant_content, created_at); the rest take the table's defaults."""
        with self.transaction():
            db.wrap(self._conn).table("journal").insert_all(
                ({**row, "source": str(row.get("source", Source.TURN)),
                  "created_at": row.get("created_at") if row.get("created_at") is not None else self.clock()}
                 for row in rows), batch_size=200)
        return len(rows)

    def journal_pending(self, limit: int = 100, after_id: int = 0) -> list[JournalEntry]:
        """Rows waiting for curation, in id order; a row that failed waits until its retry time."""
        rows = self._query(f"SELECT {_JOURNAL_COLUMNS} FROM journal WHERE status = 'pending' AND id > ? "
                           "AND (retry_at IS NULL OR retry_at <= ?) ORDER BY id LIMIT ?",
                           (after_id, self.clock(), limit))
        return [_journal(r) for r in rows]

    def journal_get(self, journal_id: int) -> JournalEntry | None:
        rows = self._query(f"SELECT {_JOURNAL_COLUMNS} FROM journal WHERE id = ?", (journal_id,))
        return _journal(rows[0]) if rows else None

    def journal_mark(self, journal_id: int, status: JournalStatus, error: str | None = None) -> None:
        self._execute("UPDATE journal SET status = ?, error = ?, processed_at = ?, attempts = attempts + 1, "
                      "retry_at = NULL WHERE id = ?", (str(status), error, self.clock(), journal_id))

    def journal_retry_later(self, journal_id: int, error: str, *, base_seconds: float,
                            max_seconds: float) -> None:
        """Count a failed attempt and keep the row pending, due again after base x 2^(attempts before) seconds
        (at most `max_seconds`). A row another writer already finished is left alone."""
        self._execute("UPDATE journal SET attempts = attempts + 1, error = ?, processed_at = ?, "
                      "retry_at = ? + min(?, ? * (1 << min(attempts, 30))) WHERE id = ? AND status = 'pending'",
                      (error, self.clock(), self.clock(), max_seconds, base_seconds, journal_id))

    def journal_counts(self) -> dict[str, int]:
        return {s: n for s, n in self._query("SELECT status, count(*) FROM journal GROUP BY status")}

    def journal_retrying(self) -> dict[str, float | int | None]:
        """Pending rows that failed at least once: how many, the most attempts, seconds until the next retry."""
        count, most, due = self._query("SELECT count(*), max(attempts), min(retry_at) FROM journal "
                                       "WHERE status = 'pending' AND attempts > 0")[0]
        wait = None if due is None else round(max(0.0, float(due) - self.clock()), 1)
        return {"rows": int(count), "max_attempts": int(most or 0), "next_retry_seconds": wait}

    def next_turn_index(self, session_id: str) -> int:
        """The index the session's next turn would get now (writers settle their own inside journal_append)."""
        return self._next_turn_index(session_id)

    def _next_turn_index(self, session_id: str) -> int:
        value = self._scalar("SELECT max(turn_index) FROM journal WHERE session_id = ?", (session_id,))
        return 0 if value is None else int(value) + 1

    def journal_texts(self, session_id: str) -> set[str]:
        """Hashes of user and assistant texts already captured for a session (to skip re-capture)."""
        rows = self._query("SELECT user_content, assistant_content FROM journal WHERE session_id = ?",
                           (session_id,))
        return {content_hash(t) for row in rows for t in row if t}

    # -- audit ----------------------------------------------------------------------------------------------
    def add_audit(self, memory_id: int | None, action: AuditAction, reason: str, actor: str,
                  details: Mapping[str, object] | None = None) -> None:
        self._execute("INSERT INTO audit_log (memory_id, action, reason, actor, created_at, details) "
                      "VALUES (?, ?, ?, ?, ?, ?)",
                      (memory_id, str(action), reason, actor, self.clock(), json.dumps(dict(details or {}))))

    def audit_for(self, memory_id: int) -> list[AuditEntry]:
        rows = self._query("SELECT id, memory_id, action, reason, actor, created_at, details FROM audit_log "
                           "WHERE memory_id = ? ORDER BY id", (memory_id,))
        return [AuditEntry(r[0], r[1], AuditAction(r[2]), r[3], r[4], r[5], json.loads(r[6])) for r in rows]

    # -- bulletins ------------------------------------------------------------------------------------------
    def add_bulletin(self, scope: str, text: str, state_hash: str, generator: str) -> Bulletin:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if self.readonly:  # shown, not stored: the next writable start stores a fresh one
            return Bulletin(0, scope, text, digest, state_hash, generator, self.clock())
        with self.transaction():
            cur = self._execute("INSERT INTO bulletins (scope, text, hash, state_hash, generator, created_at) "
                                "VALUES (?, ?, ?, ?, ?, ?)",
                                (scope, text, digest, state_hash, generator, self.clock()))
            bulletin = self.latest_bulletin(scope)
        assert bulletin is not None and bulletin.id == cur.lastrowid
        return bulletin

    def latest_bulletin(self, scope: str, *, generator_like: str = "%") -> Bulletin | None:
        """The newest bulletin of `scope` (whose generator matches the LIKE pattern `generator_like`)."""
        rows = self._query("SELECT id, scope, text, hash, state_hash, generator, created_at FROM bulletins "
                           "WHERE scope = ? AND generator LIKE ? ORDER BY id DESC LIMIT 1", (scope, generator_like))
        return Bulletin(*rows[0]) if rows else None

    def bulletin_scopes(self) -> list[str]:
        """Scopes that have had a bulletin generated at least once."""
        return [r[0] for r in self._query("SELECT DISTINCT scope FROM bulletins ORDER BY scope")]

    def memory_state_hash(self, scopes: Sequence[str]) -> str:
        """Changes whenever a memory in these scopes is added, edited, superseded or forgotten."""
        row = self._query(f"SELECT count(*), coalesce(max(id), 0), coalesce(max(updated_at), 0), "
                          f"coalesce(sum(forgotten), 0) FROM memories WHERE scope IN ({_marks(len(scopes))})",
                          scopes)[0]
        return hashlib.sha256(repr(tuple(row)).encode()).hexdigest()[:16]

    # -- quarantine -----------------------------------------------------------------------------------------
    def quarantine(self, kind: ItemKind, item_id: int, reason: str) -> None:
        """Hold a memory or episode back from recall and prompts until the user releases it."""
        with self.transaction():
            added = self._execute("""
                INSERT OR IGNORE INTO quarantine (kind, item_id, reason, created_at) VALUES (?, ?, ?, ?)
            """, (str(kind), item_id, reason, self.clock())).rowcount > 0
            if added and kind is ItemKind.MEMORY:
                self.add_audit(item_id, AuditAction.QUARANTINE, reason, "screen")

    def quarantined(self, kind: ItemKind, ids: Iterable[int] | None = None) -> dict[int, str]:
        """Quarantined ids of `kind` (among `ids` when given) with their reasons."""
        if ids is None:
            return dict(self._query("SELECT item_id, reason FROM quarantine WHERE kind = ?", (str(kind),)))
        out: dict[int, str] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            out.update(self._query(f"""
                SELECT item_id, reason FROM quarantine WHERE kind = ? AND item_id IN ({_marks(len(chunk))})
            """, (str(kind), *chunk)))
        return out

    def release(self, kind: ItemKind, item_id: int, *, actor: str) -> bool:
        """Let a quarantined item be recalled again; False when it was not quarantined."""
        with self.transaction():
            released = self._execute("DELETE FROM quarantine WHERE kind = ? AND item_id = ?",
                                     (str(kind), item_id)).rowcount > 0
            if released and kind is ItemKind.MEMORY:  # a changed memory state rebuilds the bulletin
                self._execute("UPDATE memories SET updated_at = ? WHERE id = ?", (self.clock(), item_id))
                self.add_audit(item_id, AuditAction.RELEASE, "released from quarantine", actor)
        return released

    # -- meta -----------------------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        value = self._scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return default if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        self._execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = "
                      "excluded.value", (key, value))

    # -- whole-database -------------------------------------------------------------------------------------
    def integrity_check(self) -> list[str]:
        """SQLite's own check: ['ok'] when healthy."""
        return [r[0] for r in self._query("PRAGMA integrity_check")]

    def backup_to(self, dest: Path) -> None:
        """Online backup (safe while other connections write)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        target = sqlite3.connect(str(dest))
        try:
            with self._lock:
                self._conn.backup(target)
        finally:
            target.close()
        dest.chmod(0o600)

    def counts(self) -> dict[str, int]:
        tables = ("memories", "episodes", "entities", "edges", "embeddings", "journal", "audit_log", "bulletins")
        return {t: int(self._scalar(f"SELECT count(*) FROM {t}")) for t in tables}


def _cannot_write(exc: BaseException) -> bool:
    """An open failed because the file or its folder is not writable (not because the file is damaged)."""
    return is_read_only(exc) or sqlite_cause(exc) == "SQLITE_CANTOPEN"


def _memory(row: Sequence[Any]) -> Memory:
    return Memory(
        id=row[0], scope=row[1], type=MemoryType(row[2]), content=row[3], summary=row[4], subject=row[5],
        importance=row[6], confidence=row[7], access_count=row[8], created_at=row[9], updated_at=row[10],
        accessed_at=row[11], valid_from=row[12], valid_until=row[13], superseded_by=row[14],
        forgotten=bool(row[15]), source=Source(row[16]), session_id=row[17], tags=tuple(json.loads(row[18])),
        metadata=json.loads(row[19]))


def _edge(row: Sequence[Any]) -> Edge:
    return Edge(row[0], row[1], row[2], Relation(row[3]), row[4], row[5])


def _journal(row: Sequence[Any]) -> JournalEntry:
    return JournalEntry(id=row[0], scope=row[1], session_id=row[2], turn_index=row[3], platform=row[4],
                        user_content=row[5], assistant_content=row[6], created_at=row[7],
                        status=JournalStatus(row[8]), source=Source(row[9]), attempts=row[10])
