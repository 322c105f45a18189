"""Whole-database checks on PostgreSQL: the schema, the pgvector extension, the full-text totals, row counts."""

from __future__ import annotations

import logging
from pathlib import Path

from ...errors import DatabaseError
from ..health import Health

log = logging.getLogger(__name__)


class ServerHealth(Health):
    """What doctor, backup and purge need of a PostgreSQL store (counts and orphans are the shared SQL)."""

    def integrity_check(self) -> list[str]:
        """['ok'] when the extension is there and each full-text table's totals match its rows; else what is not."""
        problems: list[str] = []
        if self._db.scalar("SELECT count(*) FROM pg_extension WHERE extname = 'vector'") == 0:
            problems.append("the pgvector extension is missing")
        for table in ("memories", "episodes"):
            kept = self._db.query("SELECT rows, tokens FROM fts_stats WHERE tbl = ?", (table,))
            real = self._db.query(f"SELECT count(*), coalesce(sum(fts_len), 0) FROM {table}")[0]
            if not kept or (int(kept[0][0]), int(kept[0][1])) != (int(real[0]), int(real[1])):
                problems.append(f"the full-text totals of {table} differ from its rows")
        return problems or ["ok"]

    def backup_to(self, dest: Path) -> None:
        raise DatabaseError(
            "a PostgreSQL store is backed up by the server (pg_dump), or copied into a file with "
            "`bowerbird store copy --to FILE.db`"
        )

    def scrub_deleted(self) -> None:
        """After hard deletes: VACUUM the tables that held their text, so the freed space is reused."""
        for table in ("memories", "episodes", "journal", "embeddings"):
            self._db.execute(f"VACUUM {table}")
