"""Bulletins: the generated "who the user is and what is going on" texts, newest per scope."""

from __future__ import annotations

import hashlib

from ..types import Bulletin
from .base import Database
from .values import from_rows

_COLUMNS = "id, scope, text, hash, state_hash, generator, created_at"


class Bulletins:
    """The bulletins table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, scope: str, text: str, state_hash: str, generator: str) -> Bulletin:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if self._db.readonly:  # shown, not stored: the next writable start stores a fresh one
            return Bulletin(0, scope, text, digest, state_hash, generator, self._db.clock())
        rows = self._db.query(
            f"""
            INSERT INTO bulletins (scope, text, hash, state_hash, generator, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            RETURNING {_COLUMNS}
        """,
            (scope, text, digest, state_hash, generator, self._db.clock()),
        )
        return from_rows(Bulletin, rows)[0]

    def latest(self, scope: str, *, generator_like: str = "%") -> Bulletin | None:
        """The newest bulletin of `scope` (whose generator matches the LIKE pattern `generator_like`)."""
        rows = from_rows(
            Bulletin,
            self._db.query(
                f"""
            SELECT {_COLUMNS}
            FROM bulletins
            WHERE scope = ? AND generator LIKE ?
            ORDER BY id DESC
            LIMIT 1
        """,
                (scope, generator_like),
            ),
        )
        return rows[0] if rows else None

    def scopes(self) -> list[str]:
        """Scopes that have had a bulletin generated at least once."""
        return [
            row["scope"]
            for row in self._db.query("SELECT DISTINCT scope FROM bulletins ORDER BY scope")
        ]
