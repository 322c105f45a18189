"""The memories table: inserting, reading, listing and the single-row state changes of memories."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import DatabaseError, InvalidInputError, NotFoundError
from ..types import Memory, MemoryFilter, MemoryType, NewMemory, type_spec
from .base import SQL_VARS, Database, TextIndex, chunks, marks
from .values import content_hash, from_row, from_rows

log = logging.getLogger(__name__)

COLUMNS = """
    id, scope, type, content, summary, subject, importance, confidence, access_count,
    created_at, updated_at, accessed_at, valid_from, valid_until, superseded_by, forgotten,
    source, session_id, tags, metadata
"""
# the cheap view whole-store scans use: no content, summary, tags or metadata
HEAD_COLUMNS = """
    id, scope, type, '' AS content, subject, importance, confidence, access_count,
    created_at, updated_at, accessed_at, valid_until, superseded_by, source
"""
_ORDER = {
    "recent": "created_at DESC, id DESC",
    "oldest": "id ASC",
    "importance": "importance DESC, created_at DESC",
}


# the filter of counts and id sets: every live memory of the scopes
_LIVE = MemoryFilter()


def _filter(
    scopes: Sequence[str] | None, wanted: MemoryFilter, now: float
) -> tuple[list[str], list[Any]]:
    where: list[str] = ["1 = 1"]
    params: list[Any] = []
    if scopes is not None:
        where.append(f"scope IN ({marks(len(scopes))})")
        params.extend(scopes)
    if wanted.types:
        where.append(f"type IN ({marks(len(wanted.types))})")
        params.extend(str(t) for t in wanted.types)
    if not wanted.include_forgotten:
        where.append("forgotten = 0")
    if wanted.current_only:
        where.append("superseded_by IS NULL AND (valid_until IS NULL OR valid_until > ?)")
        params.append(now)
    for clause, value in (
        ("created_at >= ?", wanted.since),
        ("created_at < ?", wanted.until),
        ("id > ?", wanted.after_id or None),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    return where, params


class Memories:
    """Rows of the memories table; writes that also touch other tables are composed by the Store."""

    def __init__(self, db: Database, text: TextIndex) -> None:
        self._db = db
        self._text = text
        self._untouched: dict[int, int] = {}  # accesses not yet written (the database was busy)
        self._untouched_lock = threading.Lock()

    # -- reads ----------------------------------------------------------------------------------------------
    def get(self, memory_id: int) -> Memory | None:
        rows = self._db.query(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,))
        return from_row(Memory, rows[0]) if rows else None

    def require(self, memory_id: int, scopes: Sequence[str] | None = None) -> Memory:
        """The memory, or NotFoundError if it does not exist or is outside the given scopes."""
        memory = self.get(memory_id)
        if memory is None or (scopes is not None and memory.scope not in scopes):
            raise NotFoundError(f"no memory with id {memory_id}")
        return memory

    def get_many(self, ids: Iterable[int], *, released: bool = False) -> dict[int, Memory]:
        """These memories by id; with `released`, not those held in quarantine (what recall may see, in one read)."""
        held = (
            "AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.kind = 'memory' AND q.item_id = m.id)"
            if released
            else ""
        )
        out: dict[int, Memory] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            rows = self._db.query(
                f"""
                SELECT {COLUMNS}
                FROM memories m
                WHERE id IN ({marks(len(chunk))}) {held}
            """,
                chunk,
            )
            out.update((item.id, item) for item in from_rows(Memory, rows))
        return out

    def find_by_hash(
        self, scope: str, text: str, *, include_forgotten: bool = False
    ) -> Memory | None:
        """A memory of `scope` with the same normalised content (live ones only unless asked)."""
        rows = self._db.query(
            f"""
            SELECT {COLUMNS}
            FROM memories
            WHERE scope = ? AND content_hash = ? AND (? OR forgotten = 0)
            ORDER BY id DESC
            LIMIT 1
        """,
            (scope, content_hash(text), include_forgotten),
        )
        return from_row(Memory, rows[0]) if rows else None

    def find_containing(self, scope: str, text: str, limit: int = 5) -> list[Memory]:
        """Live, current memories of `scope` whose content contains `text` verbatim, newest first."""
        return from_rows(
            Memory,
            self._db.query(
                f"""
            SELECT {COLUMNS}
            FROM memories
            WHERE scope = ? AND forgotten = 0 AND superseded_by IS NULL AND {self._db.dialect.contains("content")}
            ORDER BY id DESC
            LIMIT ?
        """,
                (scope, text, limit),
            ),
        )

    def current_by_subject(self, scope: str, subject: str) -> list[Memory]:
        """Live, not superseded memories of `scope` about `subject`, newest first."""
        return from_rows(
            Memory,
            self._db.query(
                f"""
            SELECT {COLUMNS}
            FROM memories
            WHERE scope = ? AND subject = ? AND forgotten = 0 AND superseded_by IS NULL
            ORDER BY created_at DESC, id DESC
        """,
                (scope, subject),
            ),
        )

    def find(
        self, scopes: Sequence[str] | None = None, wanted: MemoryFilter = _LIVE
    ) -> list[Memory]:
        """The memories of `scopes` (None: every scope) that `wanted` selects, in its order."""
        where, params = _filter(scopes, wanted, self._db.clock())
        limit_sql = "" if wanted.limit is None else "LIMIT ?"
        params.extend([] if wanted.limit is None else [wanted.limit])
        return from_rows(
            Memory,
            self._db.query(
                f"""
            SELECT {COLUMNS}
            FROM memories
            WHERE {" AND ".join(where)}
            ORDER BY {_ORDER[wanted.order]}
            {limit_sql}
        """,
                params,
            ),
        )

    def count_by_type(self, scopes: Sequence[str] | None = None) -> dict[str, int]:
        """Live memory counts by type (forgotten ones excluded)."""
        where, params = _filter(scopes, _LIVE, 0.0)
        rows = self._db.query(
            f"""
            SELECT type, count(*) AS n
            FROM memories
            WHERE {" AND ".join(where)}
            GROUP BY type
        """,
            params,
        )
        return {row["type"]: row["n"] for row in rows}

    def scopes(self) -> dict[str, int]:
        """Every scope that holds memories, with its count of live ones (forgotten ones excluded)."""
        rows = self._db.query("""
            SELECT scope, count(*) FILTER (WHERE forgotten = 0) AS n
            FROM memories
            GROUP BY scope
            ORDER BY scope
        """)
        return {row["scope"]: int(row["n"]) for row in rows}

    def live_ids(self, scopes: Sequence[str] | None = None) -> set[int]:
        where, params = _filter(scopes, _LIVE, 0.0)
        rows = self._db.query(f"SELECT id FROM memories WHERE {' AND '.join(where)}", params)
        return {row["id"] for row in rows}

    def heads(
        self, types: Sequence[MemoryType], *, after_id: int = 0, limit: int = 5_000
    ) -> list[Memory]:
        """Live memories of these types in id order, without content, summary, tags or metadata (those are left
        empty): the cheap view whole-store scans such as decay use."""
        return from_rows(
            Memory,
            self._db.query(
                f"""
            SELECT {HEAD_COLUMNS}
            FROM memories
            WHERE forgotten = 0 AND type IN ({marks(len(types))}) AND id > ?
            ORDER BY id
            LIMIT ?
        """,
                (*[str(t) for t in types], after_id, limit),
            ),
        )

    def subject_keys(self, scopes: Sequence[str]) -> set[str]:
        """The distinct subjects of live memories in these scopes."""
        if not scopes:
            return set()
        rows = self._db.query(
            f"""
            SELECT DISTINCT subject
            FROM memories
            WHERE scope IN ({marks(len(scopes))}) AND subject IS NOT NULL AND forgotten = 0
        """,
            scopes,
        )
        return {row["subject"] for row in rows}

    def by_subject(
        self, scopes: Sequence[str], subjects: Sequence[str], limit: int = 50
    ) -> list[int]:
        """Ids of live memories in scope about any of `subjects`: not superseded ones first, then newest first."""
        if not subjects or not scopes:
            return []
        rows = self._db.query(
            f"""
            SELECT id
            FROM memories
            WHERE scope IN ({marks(len(scopes))}) AND subject IN ({marks(len(subjects))}) AND forgotten = 0
            ORDER BY superseded_by IS NOT NULL, created_at DESC, id DESC
            LIMIT ?
        """,
            (*scopes, *subjects, limit),
        )
        return [int(row["id"]) for row in rows]

    def stale_ids(self, ids: Iterable[int], now: float) -> set[int]:
        """Those of these memories that are no longer current (forgotten, superseded or expired at `now`)."""
        out: set[int] = set()
        for chunk in chunks(list(dict.fromkeys(ids))):
            rows = self._db.query(
                f"""
                SELECT id
                FROM memories
                WHERE id IN ({marks(len(chunk))})
                  AND (forgotten != 0 OR superseded_by IS NOT NULL
                       OR (valid_until IS NOT NULL AND valid_until <= ?))
            """,
                (*chunk, now),
            )
            out.update(int(row["id"]) for row in rows)
        return out

    def state_hash(self, scopes: Sequence[str]) -> str:
        """Changes whenever a memory in these scopes is added, edited, superseded or forgotten."""
        row = self._db.query(
            f"""
            SELECT count(*), coalesce(max(id), 0), coalesce(max(updated_at), 0), coalesce(sum(forgotten), 0)
            FROM memories
            WHERE scope IN ({marks(len(scopes))})
        """,
            scopes,
        )[0]
        return hashlib.sha256(repr(tuple(row)).encode()).hexdigest()[:16]

    # -- writes of this table alone -------------------------------------------------------------------------
    def insert(self, new: NewMemory) -> int:
        """The new row's id (the Store adds its provenance and audit row in the same transaction)."""
        try:
            type_spec(str(new.type))
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
        now = self._db.clock()
        tags = json.dumps(list(new.tags))
        with self._db.transaction():
            rows = self._db.query(
                """
                INSERT INTO memories (
                    scope, type, content, summary, subject, content_hash, importance, confidence,
                    created_at, updated_at, valid_from, source, session_id, tags, metadata
                )
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                RETURNING id
            """,
                self._row(new, now, tags),
            )
            memory_id = int(rows[0]["id"])
            self._text.add("memories", memory_id, (new.content, new.summary or "", tags))
        return memory_id

    def _row(self, new: NewMemory, now: float, tags: str) -> tuple[object, ...]:
        return (
            new.scope,
            str(new.type),
            new.content,
            new.summary,
            new.subject,
            content_hash(new.content),
            min(1.0, max(0.0, new.effective_importance)),
            min(1.0, max(0.0, new.confidence)),
            new.created_at or now,
            now,
            new.valid_from or new.created_at or now,
            str(new.source),
            new.session_id,
            tags,
            json.dumps(dict(new.metadata)),
        )

    def touch(self, ids: Sequence[int]) -> None:
        """Record that these memories were recalled (access count and time feed the access boost).

        Bookkeeping only, and never waited for: while another writer holds the database (the curation worker
        writing a row), the counts wait in memory and the next touch that finds it free writes them all. A
        read-only store skips it; a read never fails for it.
        """
        if self._db.readonly:
            return
        with self._untouched_lock:
            for memory_id in ids:
                self._untouched[memory_id] = self._untouched.get(memory_id, 0) + 1
            if not self._untouched:
                return
        try:
            with self._db.try_transaction() as began:
                if not began:
                    return
                with self._untouched_lock:
                    written = dict(self._untouched)
                self._add_accesses(written)
        except (sqlite3.OperationalError, DatabaseError) as exc:
            log.warning("access counts not updated (%s); the recall itself is unaffected", exc)
            return
        with self._untouched_lock:
            for memory_id, count in written.items():
                left = self._untouched.pop(memory_id, 0) - count
                if left > 0:
                    self._untouched[memory_id] = left

    def _add_accesses(self, counts: dict[int, int]) -> None:
        """One statement per distinct count (nearly always one): each statement fires the table's update triggers
        once, which on PostgreSQL halved a prefetch's touch (2.5 -> 1.2 ms for 8 memories at 100K)."""
        now = self._db.clock()
        by_count: dict[int, list[int]] = {}
        for memory_id, count in counts.items():
            by_count.setdefault(count, []).append(memory_id)
        for count, ids in sorted(by_count.items()):
            for part in chunks(sorted(ids), SQL_VARS - 2):
                self._db.execute(
                    f"""
                    UPDATE memories SET access_count = access_count + ?, accessed_at = ?
                    WHERE id IN ({marks(len(part))})
                """,
                    (count, now, *part),
                )

    def boost(self, memory_id: int, importance: float | None) -> None:
        """Count one more access, raising importance to `importance` when that is higher."""
        self._db.execute(
            f"""
            UPDATE memories
            SET access_count = access_count + 1, accessed_at = ?,
                importance = {self._db.dialect.greatest}(importance, coalesce(?, importance))
            WHERE id = ?
        """,
            (self._db.clock(), importance, memory_id),
        )

    def set_origin(self, memory_id: int, origin: str, confidence: float) -> None:
        """Record where the memory was stated (metadata's `origin`) and raise its confidence to `confidence`."""
        with self._db.transaction():
            raw = self._db.scalar("SELECT metadata FROM memories WHERE id = ?", (memory_id,))
            metadata = json.loads(raw) if raw else {}
            metadata["origin"] = origin
            self._db.execute(
                f"""
                UPDATE memories
                SET metadata = ?, confidence = {self._db.dialect.greatest}(confidence, ?), updated_at = ?
                WHERE id = ?
            """,
                (json.dumps(metadata), confidence, self._db.clock(), memory_id),
            )

    def mark_superseded(self, old_id: int, new_id: int) -> None:
        now = self._db.clock()
        self._db.execute(
            """
            UPDATE memories
            SET valid_until = coalesce(valid_until, ?), superseded_by = ?, updated_at = ?
            WHERE id = ?
        """,
            (now, new_id, now, old_id),
        )

    def mark_forgotten(self, memory_id: int) -> None:
        now = self._db.clock()
        self._db.execute(
            """
            UPDATE memories
            SET forgotten = 1, forgotten_at = ?, updated_at = ?
            WHERE id = ?
        """,
            (now, now, memory_id),
        )

    def mark_restored(self, memory_id: int) -> None:
        self._db.execute(
            """
            UPDATE memories
            SET forgotten = 0, forgotten_at = NULL, low_since = NULL, updated_at = ?
            WHERE id = ?
        """,
            (self._db.clock(), memory_id),
        )

    def mark_changed(self, memory_id: int) -> None:
        """Bump updated_at (a changed memory state rebuilds the bulletin)."""
        self._db.execute(
            "UPDATE memories SET updated_at = ? WHERE id = ?", (self._db.clock(), memory_id)
        )

    def set_importance(self, memory_id: int, importance: float) -> None:
        self._db.execute(
            """
            UPDATE memories
            SET importance = ?, updated_at = ?
            WHERE id = ?
        """,
            (min(1.0, max(0.0, importance)), self._db.clock(), memory_id),
        )

    def delete_forgotten(self, memory_id: int) -> None:
        self._db.execute("DELETE FROM memories WHERE id = ? AND forgotten = 1", (memory_id,))


class Retention:
    """The memories table's low-importance marks and forget times, which pruning reads and writes."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def set_low_since(self, updates: Sequence[tuple[int, float | None]]) -> None:
        """Record (or clear, with None) since when a memory's effective importance has been below threshold."""
        with self._db.transaction():
            for memory_id, since in updates:
                self._db.execute(
                    "UPDATE memories SET low_since = ? WHERE id = ?", (since, memory_id)
                )

    def low_marked(self) -> dict[int, float]:
        """Live memories that carry a low-importance mark, with the time it was set."""
        rows = self._db.query("""
            SELECT id, low_since
            FROM memories
            WHERE low_since IS NOT NULL AND forgotten = 0
        """)
        return {int(row["id"]): float(row["low_since"]) for row in rows}

    def forgotten_before(self, cutoff: float, limit: int = 10_000) -> list[int]:
        """Ids of memories soft-forgotten before `cutoff`, oldest first (the ones a purge may delete)."""
        rows = self._db.query(
            """
            SELECT id
            FROM memories
            WHERE forgotten = 1 AND forgotten_at < ?
            ORDER BY forgotten_at
            LIMIT ?
        """,
            (cutoff, limit),
        )
        return [int(row["id"]) for row in rows]
