"""The questions that get a memory back (memory_questions): written at curation, each with a vector of its own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..types import MemoryQuestion, QuestionOrigin
from .base import Database, chunks, marks
from .values import from_rows


class Questions:
    """Rows of memory_questions: a memory's questions in the user's voice and who wrote them."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self, memory_id: int, texts: Iterable[str], origin: QuestionOrigin
    ) -> list[tuple[int, str]]:
        """Store the questions the memory does not have yet; returns (id, text) of those added, in order."""
        added: list[tuple[int, str]] = []
        now = self._db.clock()
        with self._db.transaction():
            for text in dict.fromkeys(t for t in texts if t.strip()):
                rows = self._db.query(
                    """
                    INSERT INTO memory_questions (memory_id, text, origin, created_at)
                    VALUES (?, ?, ?, ?)
                    ON CONFLICT (memory_id, text) DO NOTHING
                    RETURNING id
                """,
                    (memory_id, text, str(origin), now),
                )
                added.extend((int(row["id"]), text) for row in rows)
        return added

    def of(self, memory_ids: Sequence[int]) -> dict[int, list[MemoryQuestion]]:
        """Each memory's questions, oldest first (memories without any are absent)."""
        out: dict[int, list[MemoryQuestion]] = {}
        for chunk in chunks(list(memory_ids)):
            rows = self._db.query(
                f"""
                SELECT id, memory_id, text, origin, created_at
                FROM memory_questions
                WHERE memory_id IN ({marks(len(chunk))})
                ORDER BY id
            """,
                chunk,
            )
            for question in from_rows(MemoryQuestion, rows):
                out.setdefault(question.memory_id, []).append(question)
        return out

    def memories_of(self, question_ids: Sequence[int]) -> dict[int, int]:
        """question id -> the memory it gets back (ids no longer stored are absent)."""
        out: dict[int, int] = {}
        for chunk in chunks(list(question_ids)):
            rows = self._db.query(
                f"""
                SELECT id, memory_id
                FROM memory_questions
                WHERE id IN ({marks(len(chunk))})
            """,
                chunk,
            )
            out.update((int(row["id"]), int(row["memory_id"])) for row in rows)
        return out

    def ids_of(self, memory_ids: Sequence[int]) -> list[int]:
        """The ids of these memories' questions."""
        return [q.id for questions in self.of(memory_ids).values() for q in questions]

    def drop_rules(self, memory_id: int) -> list[int]:
        """Delete the questions the rules wrote for a memory (a model's own take their place); returns their ids."""
        ids = [
            q.id
            for q in self.of([memory_id]).get(memory_id, [])
            if q.origin is QuestionOrigin.RULES
        ]
        for chunk in chunks(ids):
            self._db.execute(
                f"""
                DELETE FROM memory_questions
                WHERE id IN ({marks(len(chunk))})
            """,
                chunk,
            )
        return ids

    def without_questions(self, limit: int, after_id: int = 0) -> list[int]:
        """Live memories with no question yet, by id from `after_id` on (what a reindex gives questions)."""
        rows = self._db.query(
            """
            SELECT m.id
            FROM memories m
            WHERE m.id > ? AND m.forgotten = 0
              AND NOT EXISTS (SELECT 1 FROM memory_questions q WHERE q.memory_id = m.id)
            ORDER BY m.id
            LIMIT ?
        """,
            (after_id, limit),
        )
        return [int(row["id"]) for row in rows]

    def count_without(self) -> int:
        """How many live memories have no question yet."""
        return int(
            self._db.scalar("""
            SELECT count(*)
            FROM memories m
            WHERE m.forgotten = 0
              AND NOT EXISTS (SELECT 1 FROM memory_questions q WHERE q.memory_id = m.id)
        """)
        )
