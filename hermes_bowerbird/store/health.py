"""Whole-database checks and upkeep: integrity, row counts, orphan rows, backups, scrubbing deleted text."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from .base import Database
from .connection import Connection
from .search import Search

log = logging.getLogger(__name__)

_COUNTED = (
    "memories",
    "episodes",
    "entities",
    "edges",
    "embeddings",
    "journal",
    "audit_log",
    "bulletins",
)
_ORPHANS = {
    "edges": """
        SELECT count(*)
        FROM edges
        WHERE src_id NOT IN (SELECT id FROM memories) OR dst_id NOT IN (SELECT id FROM memories)
    """,
    "memory_vectors": """
        SELECT count(*)
        FROM embeddings
        WHERE kind = 'memory' AND item_id NOT IN (SELECT id FROM memories)
    """,
    "episode_vectors": """
        SELECT count(*)
        FROM embeddings
        WHERE kind = 'episode' AND item_id NOT IN (SELECT id FROM episodes)
    """,
    "question_vectors": """
        SELECT count(*)
        FROM embeddings
        WHERE kind = 'question' AND item_id NOT IN (SELECT id FROM memory_questions)
    """,
}


class Health:
    """What doctor, backup and purge need of the database as a whole; each backend checks, backs up and scrubs
    in its own way."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def integrity_check(self) -> list[str]:
        """['ok'] when healthy, else what is wrong."""
        raise NotImplementedError

    def backup_to(self, dest: Path) -> None:
        raise NotImplementedError

    def scrub_deleted(self) -> None:
        raise NotImplementedError

    def counts(self) -> dict[str, int]:
        return {table: int(self._db.scalar(f"SELECT count(*) FROM {table}")) for table in _COUNTED}

    def orphan_counts(self) -> dict[str, int]:
        """Rows pointing at nothing (foreign keys are on, so only damage or old files produce these)."""
        return {name: int(self._db.scalar(sql)) for name, sql in _ORPHANS.items()}

    def delete_orphans(self) -> int:
        with self._db.transaction():
            removed = self._db.execute("""
                DELETE FROM edges
                WHERE src_id NOT IN (SELECT id FROM memories) OR dst_id NOT IN (SELECT id FROM memories)
            """).rowcount
            removed += self._db.execute("""
                DELETE FROM embeddings
                WHERE (kind = 'memory' AND item_id NOT IN (SELECT id FROM memories))
                   OR (kind = 'episode' AND item_id NOT IN (SELECT id FROM episodes))
                   OR (kind = 'question' AND item_id NOT IN (SELECT id FROM memory_questions))
            """).rowcount
        return removed


class FileHealth(Health):
    """SQLite's checks: its own integrity check, its online backup, its WAL."""

    def __init__(self, db: Connection, search: Search) -> None:
        super().__init__(db)
        self._file = db
        self._search = search

    def integrity_check(self) -> list[str]:
        """SQLite's own check: ['ok'] when healthy."""
        return [row["integrity_check"] for row in self._db.query("PRAGMA integrity_check")]

    def backup_to(self, dest: Path) -> None:
        """Online backup (safe while other connections write)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        target = sqlite3.connect(str(dest))
        try:
            self._file.backup_to(target)
        finally:
            target.close()
        dest.chmod(0o600)

    def scrub_deleted(self) -> None:
        """After hard deletes: rewrite the full-text indexes without the deleted rows' words, then checkpoint and
        truncate the WAL. With secure_delete on (db.connect) the freed pages are zeroed, so no deleted text
        lingers in the file; a checkpoint blocked by a reader leaves the WAL for the next one."""
        self._search.optimize()
        if self._db.query("PRAGMA wal_checkpoint(TRUNCATE)")[0]["busy"]:
            log.info(
                "the WAL is still in use by a reader; deleted pages leave it at a later checkpoint"
            )
