"""The audit log (who changed which memory, how and why) and the quarantine of held-back items."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from ..types import AuditAction, AuditEntry, ItemKind
from .base import Database, chunks, marks
from .values import from_rows


class Audit:
    """Append-only rows of the audit_log table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self,
        memory_id: int | None,
        action: AuditAction,
        reason: str,
        actor: str,
        details: Mapping[str, object] | None = None,
    ) -> None:
        self._db.execute(
            """
            INSERT INTO audit_log (memory_id, action, reason, actor, created_at, details)
            VALUES (?, ?, ?, ?, ?, ?)
        """,
            (
                memory_id,
                str(action),
                reason,
                actor,
                self._db.clock(),
                json.dumps(dict(details or {})),
            ),
        )

    def of_memory(self, memory_id: int) -> list[AuditEntry]:
        return from_rows(
            AuditEntry,
            self._db.query(
                """
            SELECT id, memory_id, action, reason, actor, created_at, details
            FROM audit_log
            WHERE memory_id = ?
            ORDER BY id
        """,
                (memory_id,),
            ),
        )


class Quarantine:
    """Memories and episodes held back from recall and prompts until the user releases them."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, kind: ItemKind, item_id: int, reason: str) -> bool:
        """Hold the item back; False when it already was."""
        cursor = self._db.execute(
            """
            INSERT INTO quarantine (kind, item_id, reason, created_at)
            VALUES (?, ?, ?, ?)
            ON CONFLICT DO NOTHING
        """,
            (str(kind), item_id, reason, self._db.clock()),
        )
        return cursor.rowcount > 0

    def reasons(self, kind: ItemKind, ids: Iterable[int] | None = None) -> dict[int, str]:
        """Quarantined ids of `kind` (among `ids` when given) with their reasons."""
        if ids is None:
            rows = self._db.query(
                "SELECT item_id, reason FROM quarantine WHERE kind = ?", (str(kind),)
            )
            return {row["item_id"]: row["reason"] for row in rows}
        out: dict[int, str] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            rows = self._db.query(
                f"""
                SELECT item_id, reason
                FROM quarantine
                WHERE kind = ? AND item_id IN ({marks(len(chunk))})
            """,
                (str(kind), *chunk),
            )
            out.update((row["item_id"], row["reason"]) for row in rows)
        return out

    def remove(self, kind: ItemKind, item_id: int) -> bool:
        """Release the item; False when it was not held."""
        cursor = self._db.execute(
            "DELETE FROM quarantine WHERE kind = ? AND item_id = ?", (str(kind), item_id)
        )
        return cursor.rowcount > 0
