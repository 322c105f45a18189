"""The meta table: small named values the engine keeps between runs (cursors, settings in force)."""

from __future__ import annotations

from .base import Database


class Meta:
    """Key-value rows."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self._db.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return default if value is None else str(value)

    def set(self, key: str, value: str) -> None:
        self._db.execute(
            """
            INSERT INTO meta (key, value)
            VALUES (?, ?)
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
        """,
            (key, value),
        )
