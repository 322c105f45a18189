"""Stored embedding vectors of memories and episodes, and the embedding cache keyed by content hash."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import DatabaseError
from ..types import ItemKind, VectorModel
from .base import SQL_VARS, Database, Params, chunks, marks
from .values import blob_vector, vector_blob


def _table(kind: ItemKind) -> tuple[str, str]:
    """The rows holding items of `kind` (as t, with their text as t.content), and the condition that keeps only live
    ones: a question lives while its memory is not forgotten."""
    if kind is ItemKind.MEMORY:
        return "memories t", "AND t.forgotten = 0"
    if kind is ItemKind.QUESTION:
        return (
            "(SELECT q.id, q.text AS content, m.forgotten FROM memory_questions q "
            "JOIN memories m ON m.id = q.memory_id) t",
            "AND t.forgotten = 0",
        )
    return "episodes t", ""


class Vectors:
    """The embeddings table: one vector per (kind, item), with the model and dimension that made it.

    Reads name the model and dimension they want, so vectors of two models are never mixed or compared; a
    re-embedding with another model replaces each item's vector in place.

    Here vectors are stored as little-endian float32 blobs and ranked in the process (embeddings/index.py keeps
    them in memory); a backend whose server ranks them itself says so with `ranks_nearest` and `nearest`."""

    ranks_nearest = False
    # how a SELECT reads a stored vector (what `_vector` decodes)
    VECTOR = "vector"

    def __init__(self, db: Database) -> None:
        self._db = db

    def nearest(
        self, kind: ItemKind, model: str, vector: np.ndarray, k: int, scopes: Sequence[str]
    ) -> list[tuple[int, float]]:
        """The server's own ranking; this store has none (`ranks_nearest` is False)."""
        raise DatabaseError("this store does not rank vectors itself; search the in-memory index")

    def close(self) -> None:
        """Let go of what is kept in memory (a backend that ranks vectors itself may hold some)."""

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """Many vectors written at once (a store copy): a backend with a search index builds it once, after."""
        yield

    def put(self, kind: ItemKind, model: str, items: Sequence[tuple[int, np.ndarray]]) -> None:
        self._db.executemany(
            """
            INSERT INTO embeddings (kind, item_id, model, dim, vector)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (kind, item_id)
            DO UPDATE SET model = excluded.model, dim = excluded.dim, vector = excluded.vector
        """,
            [(str(kind), int(i), model, int(v.shape[-1]), vector_blob(v)) for i, v in items],
        )

    def other_models(self, model: str, dim: int) -> dict[VectorModel, int]:
        """How many stored vectors each model other than this one (name and dimension) made."""
        rows = self._db.query(
            """
            SELECT model, dim, count(*) AS n
            FROM embeddings
            WHERE model != ? OR dim != ?
            GROUP BY model, dim
        """,
            (model, dim),
        )
        return {VectorModel(str(row["model"]), int(row["dim"])): int(row["n"]) for row in rows}

    def any_other_model(self, model: str, dim: int) -> bool:
        """Whether any stored vector comes from another model than this one (name and dimension): another name
        is looked for in the model index alone, another dimension under the same name only when there is none."""
        other_name = self._db.scalar(
            """
            SELECT EXISTS (SELECT 1 FROM embeddings WHERE model < ?)
                OR EXISTS (SELECT 1 FROM embeddings WHERE model > ?)
        """,
            (model, model),
        )
        if other_name:
            return True
        return bool(
            self._db.scalar(
                "SELECT EXISTS (SELECT 1 FROM embeddings WHERE model = ? AND dim != ?)",
                (model, dim),
            )
        )

    def delete(self, kind: ItemKind, ids: Sequence[int]) -> None:
        with self._db.transaction():
            for chunk in chunks(list(ids)):
                self._db.execute(
                    f"""
                    DELETE FROM embeddings
                    WHERE kind = ? AND item_id IN ({marks(len(chunk))})
                """,
                    (str(kind), *chunk),
                )

    def _vector_rows(self, sql: str, params: Params) -> list[Any]:
        """Rows that hold stored vectors (`VECTOR`)."""
        return self._db.query(sql, params)

    def load(self, kind: ItemKind, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """All stored vectors of one kind and model: (int64 ids, float32 matrix of shape n x dim)."""
        rows = self._vector_rows(
            f"""
            SELECT item_id, {self.VECTOR} AS vector
            FROM embeddings
            WHERE model = ? AND dim = ? AND kind = ?
            ORDER BY item_id
        """,
            (model, dim, str(kind)),
        )
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        ids = np.fromiter((row["item_id"] for row in rows), dtype=np.int64, count=len(rows))
        return ids, self._matrix([row["vector"] for row in rows])

    def rows_after(
        self, kind: ItemKind, after_id: int, limit: int
    ) -> list[tuple[int, str, np.ndarray]]:
        """(item id, model, vector) of the next `limit` stored vectors of a kind after `after_id`, by id."""
        rows = self._vector_rows(
            f"""
            SELECT item_id, model, {self.VECTOR} AS vector
            FROM embeddings
            WHERE kind = ? AND item_id > ?
            ORDER BY item_id
            LIMIT ?
        """,
            (str(kind), after_id, limit),
        )
        return [(int(row[0]), str(row[1]), self._vector(row[2])) for row in rows]

    def _vector(self, stored: object) -> np.ndarray:
        """A stored vector as this backend reads it back (here: a float32 blob)."""
        assert isinstance(stored, bytes)
        return blob_vector(stored)

    def _matrix(self, stored: Sequence[object]) -> np.ndarray:
        """Stored vectors of one dimension as a float32 matrix (here: blobs joined and read at once)."""
        if not stored:
            return np.empty((0, 0), dtype=np.float32)
        flat = np.frombuffer(b"".join(v for v in stored if isinstance(v, bytes)), dtype="<f4")
        return flat.reshape(len(stored), -1).astype(np.float32, copy=False)

    def span(self, kind: ItemKind, model: str, dim: int) -> tuple[int, int]:
        """(how many, highest item id) of the stored vectors of one kind and model."""
        row = self._db.query(
            """
            SELECT count(*) AS n, coalesce(max(item_id), 0) AS top
            FROM embeddings
            WHERE model = ? AND dim = ? AND kind = ?
        """,
            (model, dim, str(kind)),
        )[0]
        return int(row["n"]), int(row["top"])

    def ids(self, kind: ItemKind, model: str, dim: int) -> np.ndarray:
        """Item ids (int64) of the stored vectors of one kind and model."""
        rows = self._db.query(
            """
            SELECT item_id
            FROM embeddings
            WHERE model = ? AND dim = ? AND kind = ?
        """,
            (model, dim, str(kind)),
        )
        return np.fromiter((row["item_id"] for row in rows), dtype=np.int64, count=len(rows))

    def after(
        self, kind: ItemKind, model: str, dim: int, after_id: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Stored vectors of one kind and model with item ids above `after_id`: (int64 ids, float32 matrix)."""
        rows = self._vector_rows(
            f"""
            SELECT item_id, {self.VECTOR} AS vector
            FROM embeddings
            WHERE model = ? AND dim = ? AND kind = ? AND item_id > ?
            ORDER BY item_id
        """,
            (model, dim, str(kind), after_id),
        )
        ids = np.fromiter((row["item_id"] for row in rows), dtype=np.int64, count=len(rows))
        return ids, self._matrix([row["vector"] for row in rows])

    def get_many(
        self, kind: ItemKind, model: str, dim: int, ids: Sequence[int]
    ) -> dict[int, np.ndarray]:
        """The stored vectors of these items from one model."""
        out: dict[int, np.ndarray] = {}
        for chunk in chunks(list(ids), SQL_VARS - 3):
            rows = self._vector_rows(
                f"""
                SELECT item_id, {self.VECTOR} AS vector
                FROM embeddings
                WHERE model = ? AND dim = ? AND kind = ? AND item_id IN ({marks(len(chunk))})
            """,
                (model, dim, str(kind), *chunk),
            )
            out.update((int(row["item_id"]), self._vector(row["vector"])) for row in rows)
        return out

    def model_counts(self) -> dict[tuple[str, str, int], int]:
        rows = self._db.query("""
            SELECT kind, model, dim, count(*) AS n
            FROM embeddings
            GROUP BY kind, model, dim
        """)
        return {(row["kind"], row["model"], row["dim"]): row["n"] for row in rows}

    def missing_texts(
        self, kind: ItemKind, model: str, dim: int, limit: int, after_id: int = 0
    ) -> list[tuple[int, str]]:
        """Items with no vector from this model and dimension (new, or embedded by another model), by id."""
        table, live = _table(kind)
        rows = self._db.query(
            f"""
            SELECT t.id, t.content
            FROM {table}
            LEFT JOIN embeddings e ON e.kind = ? AND e.item_id = t.id AND e.model = ? AND e.dim = ?
            WHERE e.item_id IS NULL AND t.id > ? {live}
            ORDER BY t.id
            LIMIT ?
        """,
            (str(kind), model, dim, after_id, limit),
        )
        return [(int(row["id"]), str(row["content"])) for row in rows]

    def count_missing(self, kind: ItemKind, model: str, dim: int) -> int:
        """How many items `missing_texts` would return without a limit."""
        table, live = _table(kind)
        return int(
            self._db.scalar(
                f"""
            SELECT count(*)
            FROM {table}
            LEFT JOIN embeddings e ON e.kind = ? AND e.item_id = t.id AND e.model = ? AND e.dim = ?
            WHERE e.item_id IS NULL {live}
        """,
                (str(kind), model, dim),
            )
        )


class EmbeddingCache:
    """Vectors by content hash, so the same text is never embedded twice."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for chunk in chunks(list(hashes)):
            rows = self._db.query(
                f"""
                SELECT hash, vector
                FROM embedding_cache
                WHERE hash IN ({marks(len(chunk))})
            """,
                chunk,
            )
            out.update((row["hash"], blob_vector(row["vector"])) for row in rows)
        return out

    def put(self, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        if self._db.readonly:
            return
        now = self._db.clock()
        self._db.executemany(
            """
            INSERT INTO embedding_cache (hash, model, dim, vector, created_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (hash) DO UPDATE SET
                model = excluded.model, dim = excluded.dim, vector = excluded.vector,
                created_at = excluded.created_at
        """,
            [(h, m, int(v.shape[-1]), vector_blob(v), now) for h, m, v in rows],
        )
