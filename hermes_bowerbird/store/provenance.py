"""The memory_provenance table: which captured turns each memory came from."""

from __future__ import annotations

from collections.abc import Sequence

from ..types import Provenance
from .base import Database, chunks, marks


class Provenances:
    """Links from memories to the (session, turn) they were extracted from."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, memory_id: int, provenance: Sequence[Provenance]) -> None:
        with self._db.transaction():
            for p in provenance:
                self._db.execute(
                    """
                    INSERT INTO memory_provenance (memory_id, session_id, turn_index)
                    VALUES (?, ?, ?)
                    ON CONFLICT DO NOTHING
                """,
                    (memory_id, p.session_id, p.turn_index),
                )

    def of(self, memory_ids: Sequence[int]) -> dict[int, list[Provenance]]:
        """Source turns of each memory, in capture order."""
        out: dict[int, list[Provenance]] = {i: [] for i in memory_ids}
        for chunk in chunks(list(memory_ids)):
            rows = self._db.query(
                f"""
                SELECT p.memory_id, p.session_id, p.turn_index
                FROM memory_provenance p
                LEFT JOIN journal j ON j.session_id = p.session_id AND j.turn_index = p.turn_index
                WHERE p.memory_id IN ({marks(len(chunk))})
                GROUP BY p.memory_id, p.session_id, p.turn_index
                ORDER BY p.memory_id, min(coalesce(j.id, 0)), p.turn_index
            """,
                chunk,
            )
            for row in rows:
                out[row["memory_id"]].append(Provenance(row["session_id"], row["turn_index"]))
        return out

    def memories_from_episodes(self, episode_ids: Sequence[int]) -> dict[int, list[int]]:
        """Episode id -> ids of live memories of the same scope extracted from that episode's turn."""
        out: dict[int, list[int]] = {}
        for chunk in chunks(list(episode_ids)):
            # joins in written order fix the loop order (episode -> its turn's provenance -> memory): left to
            # choose, SQLite's planner scanned every live memory of the scope per episode (86 ms for 100 episodes
            # at 10K items)
            join = self._db.dialect.ordered_join
            rows = self._db.query(
                f"""
                SELECT e.id AS episode_id, p.memory_id
                FROM episodes e
                {join} memory_provenance p
                    ON p.session_id = e.session_id AND p.turn_index = e.turn_index
                {join} memories m
                    ON m.id = p.memory_id AND m.scope = e.scope AND m.forgotten = 0
                WHERE e.id IN ({marks(len(chunk))})
            """,
                chunk,
            )
            for row in rows:
                out.setdefault(int(row["episode_id"]), []).append(int(row["memory_id"]))
        return out
