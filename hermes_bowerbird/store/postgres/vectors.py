"""Vectors on PostgreSQL: stored as pgvector `vector`s beside their scope, ranked by the server (HNSW, cosine).

A search returns one request's scopes only. A user's own few thousand vectors are ranked exactly: in this process
once it holds them (held.py), and by the server until then, through the scope index when they are a small share of
the table, so no other user's row is read; when they are a large share (a 10K store whose gateway user sees two
fifths of it), the planner scans the table and filters the other scopes' rows out. More vectors than that go
through the HNSW index of their model, which pgvector keeps walking until enough rows of the scopes are found (its
iterative scan), and returns no other row either.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from ...errors import DatabaseError
from ...types import ItemKind
from ..base import Params, marks
from ..vectors import Vectors
from .connection import ServerConnection
from .held import HeldVectors
from .wire import dimension, sent, sent_rows

log = logging.getLogger(__name__)

# Scopes holding fewer vectors than this (of the kind and model searched) are ranked exactly. Measured on this
# machine (384 dimensions): an exact ranking of 20,000 vectors takes about as long as an HNSW search of 1M.
EXACT_BELOW = 20_000
EF_SEARCH = 100  # HNSW candidates per search (pgvector's default is 40; recall@10 0.99 at 1M here)
_SCOPE_COUNT_SECONDS = 60.0  # how long a scope's vector count is trusted
# the rows (as t, with t.id and t.scope) whose scope a stored vector of each kind takes: a question its memory's
_SCOPED = {
    ItemKind.MEMORY: "memories",
    ItemKind.EPISODE: "episodes",
    ItemKind.QUESTION: "(SELECT q.id, m.scope FROM memory_questions q JOIN memories m ON m.id = q.memory_id)",
}


def configure(conn: psycopg.Connection[Any]) -> None:
    """Prepare a new connection: pgvector's type (numpy arrays out as vectors, vectors back as float32 arrays),
    and how many candidates an HNSW search weighs and that it goes on until enough rows of the scopes are found."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise DatabaseError("the pgvector extension is missing from this database")
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    dumper = type("NumpyVectorDumper", (_VectorDumper,), {"oid": info.oid})
    conn.adapters.register_dumper("numpy.ndarray", dumper)
    conn.adapters.register_loader(info.oid, _VectorTextLoader)
    conn.adapters.register_loader(info.oid, _VectorBinaryLoader)


class _VectorDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        values = np.asarray(obj, dtype=">f4").ravel()
        return struct.pack(">HH", len(values), 0) + values.tobytes()


class _VectorTextLoader(Loader):
    format = Format.TEXT

    def load(self, data: Any) -> np.ndarray:
        text = bytes(data).decode("ascii").strip("[]")
        return np.array(text.split(","), dtype=np.float32) if text else np.empty(0, np.float32)


class _VectorBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray:
        return sent(bytes(data))


def index_name(model: str, dim: int) -> str:
    """The HNSW index of one model's vectors (named by a digest: a model name may hold any character)."""
    digest = hashlib.sha256(f"{model}\0{dim}".encode()).hexdigest()[:16]
    return f"embeddings_hnsw_{digest}"


def _literal(text: str) -> str:
    """`text` as an SQL string literal (an index's predicate must be a constant, not a parameter)."""
    return "'" + text.replace("'", "''") + "'"


class ServerVectors(Vectors):
    """The embeddings table on PostgreSQL; the server ranks nearest neighbours itself (`ranks_nearest`)."""

    ranks_nearest = True
    # pgvector's binary form, as bytea: a text vector would be parsed digit by digit (10 ms per 100 vectors)
    VECTOR = "vector_send(vector)"

    _db: ServerConnection

    def __init__(self, db: ServerConnection) -> None:
        super().__init__(db)
        self._indexed: set[tuple[str, int]] = set()
        self._counts: dict[tuple[str, str, tuple[str, ...]], tuple[float, int]] = {}
        self._lock = threading.Lock()
        # the indexes a bulk write leaves for its end (None: none under way)
        self._deferred: set[tuple[str, int]] | None = None
        self._held = HeldVectors(db)

    def put(self, kind: ItemKind, model: str, items: Sequence[tuple[int, np.ndarray]]) -> None:
        if not items:
            return
        dims = {int(v.shape[-1]) for _, v in items}
        table = _SCOPED[kind]
        self._held.written(kind, [int(i) for i, _ in items])
        with self._db.transaction():
            for dim in dims:
                self._ensure_index(model, dim)
            self._db.executemany(
                f"""
                INSERT INTO embeddings (kind, item_id, model, dim, scope, vector)
                SELECT ?, t.id, ?, ?, t.scope, ?
                FROM {table} t
                WHERE t.id = ?
                ON CONFLICT (kind, item_id) DO UPDATE SET
                    model = excluded.model, dim = excluded.dim, scope = excluded.scope,
                    vector = excluded.vector
            """,
                [
                    (str(kind), model, int(v.shape[-1]), np.asarray(v, np.float32), int(i))
                    for i, v in items
                ],
            )

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """Vectors written in bulk go in without their HNSW index, built once at the end: inserting them into the
        graph one by one takes far longer than building it once. A write that fails leaves the index to the next
        vector stored."""
        self._deferred = set()
        try:
            yield
        except BaseException:
            self._deferred = None
            raise
        deferred, self._deferred = self._deferred, None
        for model, dim in sorted(deferred):
            self._ensure_index(model, dim)

    def _ensure_index(self, model: str, dim: int) -> None:
        """The HNSW index over this model's vectors, made the first time one of them is stored."""
        if (model, dim) in self._indexed:
            return
        if self._deferred is not None:
            self._deferred.add((model, dim))
            return
        self._db.execute(
            f"""
            CREATE INDEX IF NOT EXISTS {index_name(model, dim)}
            ON embeddings USING hnsw ((vector::vector({dim})) vector_cosine_ops)
            WHERE model = {_literal(model)} AND dim = {dim}
        """
        )
        self._indexed.add((model, dim))

    def _vector_rows(self, sql: str, params: Params) -> list[Any]:
        # binary: 66 vectors in 1.3 ms, not 3.0 as hex text
        return self._db.query(sql, params, binary=True)

    def nearest(
        self,
        kind: ItemKind,
        model: str,
        vector: np.ndarray,
        k: int,
        scopes: Sequence[str],
    ) -> list[tuple[int, float]]:
        """The `k` stored vectors of these scopes most similar to `vector` (cosine), best first."""
        if not scopes or k <= 0:
            return []
        dim = int(vector.shape[-1])
        query = np.asarray(vector, np.float32)
        where = f"""
            model = {_literal(model)} AND dim = {dim} AND kind = ? AND scope IN ({marks(len(scopes))})
        """
        if self._scope_count(kind, model, scopes) < EXACT_BELOW:
            held = self._held.nearest(kind, model, query, k, scopes)
            if held is not None:
                return held
            # exact: each distance computed once, in a subquery whose order the HNSW index cannot serve (ranking by
            # the select list's expression computed it twice a row, 2.4x slower at 4,000 vectors)
            rows = self._db.query(
                f"""
                SELECT item_id, 1 - distance AS score
                FROM (
                    SELECT item_id, vector::vector({dim}) <=> ?::vector({dim}) AS distance
                    FROM embeddings
                    WHERE {where}
                    OFFSET 0
                ) scored
                ORDER BY distance
                LIMIT ?
            """,
                (query, str(kind), *scopes, k),
            )
        else:
            rows = self._db.query(
                f"""
                SELECT item_id, 1 - (vector::vector({dim}) <=> ?::vector({dim})) AS score
                FROM embeddings
                WHERE {where}
                ORDER BY vector::vector({dim}) <=> ?::vector({dim})
                LIMIT ?
            """,
                (query, str(kind), *scopes, query, k),
            )
        found = [(int(row["item_id"]), float(row["score"])) for row in rows]
        found.sort(key=lambda hit: -hit[1])  # an iterative scan may return near-ties out of order
        return found

    def delete(self, kind: ItemKind, ids: Sequence[int]) -> None:
        self._held.written(kind, [int(i) for i in ids])
        super().delete(kind, ids)

    def get_many(
        self, kind: ItemKind, model: str, dim: int, ids: Sequence[int]
    ) -> dict[int, np.ndarray]:
        """The stored vectors of these items from one model: those held in memory from there (as unit rows, as
        SQLite's index gives them), the rest from the server."""
        found = self._held.vectors(kind, model, dim, ids)
        rest = [i for i in ids if i not in found]
        if rest:
            found.update(super().get_many(kind, model, dim, rest))
        return found

    def close(self) -> None:
        self._held.close()

    def _scope_count(self, kind: ItemKind, model: str, scopes: Sequence[str]) -> int:
        key = (str(kind), model, tuple(sorted(scopes)))
        now = time.monotonic()
        with self._lock:
            cached = self._counts.get(key)
            if cached is not None and now - cached[0] < _SCOPE_COUNT_SECONDS:
                return cached[1]
        count = int(
            self._db.scalar(
                f"""
                SELECT count(*)
                FROM embeddings
                WHERE model = ? AND kind = ? AND scope IN ({marks(len(scopes))})
            """,
                (model, str(kind), *scopes),
            )
        )
        with self._lock:
            self._counts[key] = (now, count)
        return count

    def _vector(self, stored: object) -> np.ndarray:
        assert isinstance(stored, bytes)
        return sent(stored)

    def _matrix(self, stored: Sequence[object]) -> np.ndarray:
        if not stored:
            return np.empty((0, 0), dtype=np.float32)
        raw = [v for v in stored if isinstance(v, bytes)]
        assert len(raw) == len(stored)
        return sent_rows(raw, dimension(raw[0]))
