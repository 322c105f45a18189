"""Full-text search (FTS5) over memories and episodes; MATCH input is always built by fts_match_expression."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInputError
from ..explain import is_read_only
from ..types import ItemKind
from .bm25 import MEMORY_WEIGHTS
from .connection import Connection, marks
from .lexemes import match_terms

log = logging.getLogger(__name__)

# how many of the index's best matches are ranked before the scope filter, per row wanted (design choice: one
# user's share of a gateway's store below a quarter falls back to ranking every match, same answer, slower)
_WIDEN = 4
# How SQLite words a MATCH expression FTS5 cannot parse (as opposed to a busy or damaged database)
_FTS_SYNTAX_ERRORS = ("fts5:", "no such column", "unknown special query", "unterminated string")
FTS_TABLES = ("memories_fts", "episodes_fts")


def fts_match_expression(text: str, *, prefix_min: int = 0, operator: str = "OR") -> str | None:
    """Turn arbitrary text into a safe FTS5 MATCH expression of quoted terms (None when nothing is left).

    Every term is a bare word run wrapped in double quotes, so FTS5 syntax in the input (quotes, `*`, `NEAR(`,
    `-`, parentheses, column filters) is never interpreted. Terms at least `prefix_min` long match as prefixes.
    """
    terms = match_terms(text)
    if not terms:
        return None
    parts = [f'"{t}"*' if prefix_min and len(t) >= prefix_min else f'"{t}"' for t in terms]
    return f" {operator} ".join(parts)


class Search:
    """bm25 search of both full-text indexes, their statistics, checks and upkeep."""

    def __init__(self, db: Connection) -> None:
        self._db = db

    def memories(
        self,
        match: str,
        scopes: Sequence[str],
        limit: int = 50,
        *,
        current_only: bool = False,
        by_scope: bool = False,
    ) -> list[tuple[int, float]]:
        """(memory id, bm25 score: higher is better) for a MATCH expression from fts_match_expression. One file has
        one connection: `by_scope` changes nothing here."""
        live = f"""
            m.forgotten = 0 AND m.scope IN ({marks(len(scopes))}) AND (? = 0 OR m.superseded_by IS NULL)
        """
        best = f"""
            SELECT m.id, best.score
            FROM (
                SELECT rowid AS id, -bm25(memories_fts, ?, ?, ?) AS score
                FROM memories_fts
                WHERE memories_fts MATCH ?
                ORDER BY score DESC
                LIMIT ?
            ) AS best
            JOIN memories m ON m.id = best.id
            WHERE {live}
            ORDER BY best.score DESC
            LIMIT ?
        """
        every = f"""
            SELECT m.id, -bm25(memories_fts, ?, ?, ?) AS score
            FROM memories_fts
            JOIN memories m ON m.id = memories_fts.rowid
            WHERE memories_fts MATCH ? AND {live}
            ORDER BY score DESC
            LIMIT ?
        """
        return self._best_first(
            (best, (*MEMORY_WEIGHTS, match, limit * _WIDEN, *scopes, current_only, limit)),
            (every, (*MEMORY_WEIGHTS, match, *scopes, current_only, limit)),
            limit,
        )

    def episodes(
        self, match: str, scopes: Sequence[str], limit: int = 50, *, by_scope: bool = False
    ) -> list[tuple[int, float]]:
        """(episode id, bm25 score: higher is better) for a MATCH expression from fts_match_expression (`by_scope`
        changes nothing here)."""
        best = f"""
            SELECT e.id, best.score
            FROM (
                SELECT rowid AS id, -bm25(episodes_fts) AS score
                FROM episodes_fts
                WHERE episodes_fts MATCH ?
                ORDER BY score DESC
                LIMIT ?
            ) AS best
            JOIN episodes e ON e.id = best.id
            WHERE e.scope IN ({marks(len(scopes))})
            ORDER BY best.score DESC
            LIMIT ?
        """
        every = f"""
            SELECT e.id, -bm25(episodes_fts) AS score
            FROM episodes_fts
            JOIN episodes e ON e.id = episodes_fts.rowid
            WHERE episodes_fts MATCH ? AND e.scope IN ({marks(len(scopes))})
            ORDER BY score DESC
            LIMIT ?
        """
        return self._best_first(
            (best, (match, limit * _WIDEN, *scopes, limit)),
            (every, (match, *scopes, limit)),
            limit,
        )

    def _best_first(
        self,
        best: tuple[str, Sequence[Any]],
        every: tuple[str, Sequence[Any]],
        limit: int,
    ) -> list[tuple[int, float]]:
        """The `limit` best rows in scope: first from the index's best few (ranked before any row is joined),
        and only when fewer than `limit` of those are in scope and live, from every match.

        Joining each match to its row before ranking cost half of a search (10,000 chat texts, a typical
        question matching 840: 20 ms joined, 10 ms ranked first). The answer is the same either way: when
        `limit` rows of the best few pass the filter, no row outside them can rank above the last of them."""
        found = self._fts(*best)
        return found if len(found) >= limit else self._fts(*every)

    def _fts(self, sql: str, params: Sequence[Any]) -> list[tuple[int, float]]:
        """Run a full-text query. An expression FTS5 cannot parse is the caller's bug (expressions come from
        fts_match_expression, which quotes every term) and raises InvalidInputError; any other SQLite failure
        is logged and gives no rows, so a busy or damaged index costs the keyword signal, never the search."""
        try:
            return [(int(row["id"]), float(row["score"])) for row in self._db.query(sql, params)]
        except sqlite3.OperationalError as exc:
            if str(exc).startswith(_FTS_SYNTAX_ERRORS):
                raise InvalidInputError(
                    f"not a full-text expression FTS5 accepts ({exc}); "
                    "build it with fts_match_expression"
                ) from exc
            log.warning("full-text query failed, searching without it: %s", exc)
            return []

    def ids_after(self, kind: ItemKind, scopes: Sequence[str], after_id: int = 0) -> list[int]:
        """Ids of memories (any state), episodes or memories' questions in these scopes with id > after_id, ascending.

        `+scope` keeps SQLite on the id range instead of a scope index (which reads every row of the scope and
        sorts them): asked before each search with the newest id seen, 3 ms -> 0.01 ms at 10,000 memories."""
        if kind is ItemKind.QUESTION:
            return self._question_ids_after(scopes, after_id)
        table = "memories" if kind is ItemKind.MEMORY else "episodes"
        rows = self._db.query(
            f"""
            SELECT id
            FROM {table}
            WHERE id > ? AND +scope IN ({marks(len(scopes))})
            ORDER BY id
        """,
            (after_id, *scopes),
        )
        return [int(row["id"]) for row in rows]

    def _question_ids_after(self, scopes: Sequence[str], after_id: int) -> list[int]:
        rows = self._db.query(
            f"""
            SELECT q.id
            FROM memory_questions q
            JOIN memories m ON m.id = q.memory_id
            WHERE q.id > ? AND +m.scope IN ({marks(len(scopes))})
            ORDER BY q.id
        """,
            (after_id, *scopes),
        )
        return [int(row["id"]) for row in rows]

    def corpus_size(self) -> int:
        """Highest episode id plus highest memory id: a cheap upper bound on the documents both full-text indexes
        hold (deleted rows leave gaps), used as N in inverse document frequencies."""
        return int(
            self._db.scalar("""
            SELECT (SELECT coalesce(max(id), 0) FROM episodes) + (SELECT coalesce(max(id), 0) FROM memories)
        """)
        )

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
                sql = f"""
                    SELECT count(*)
                    FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)
                """
                try:
                    total += int(self._db.scalar(sql, (match, cap)))
                except sqlite3.OperationalError as exc:
                    log.warning("full-text count rejected by SQLite: %s", exc)
            out[word] = total
        return out

    def integrity(self) -> dict[str, bool]:
        """Run FTS5's integrity-check on both indexes (True = consistent)."""
        out = {}
        for table in FTS_TABLES:
            try:
                self._db.execute(
                    f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"
                )
                out[table] = True
            except sqlite3.DatabaseError as exc:
                # the check is written as an INSERT: a read-only store cannot run it
                if is_read_only(exc):
                    continue
                out[table] = False
        return out

    def rebuild(self) -> list[str]:
        """Rebuild both full-text indexes from their tables, then merge their segments (sqlite-utils does both)."""
        with self._db.transaction():
            handle = self._db.sqlite_utils()
            for table in FTS_TABLES:
                handle.table(table).rebuild_fts().optimize()
        return list(FTS_TABLES)

    def optimize(self) -> None:
        """Merge each index's segments, which rewrites them without the words of deleted rows."""
        with self._db.transaction():
            for table in FTS_TABLES:
                self._db.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
