"""In-memory vector index: a float32 matrix searched exactly, plus an optional HNSW tier for large corpora."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DatabaseError, EmbeddingError

if TYPE_CHECKING:
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]
    IdArray = npt.NDArray[np.int64]
    BoolArray = npt.NDArray[np.bool_]

log = logging.getLogger(__name__)

DEFAULT_ANN_THRESHOLD = 200_000
_MIN_CAPACITY = 1024
_GROWTH = 1.5
_COMPACT_RATIO = 0.25  # compact when this share of rows are tombstones
_GATHER_RATIO = 0.25  # below this share of allowed rows, score only the gathered rows
_CHUNK_ROWS = 65_536  # rows converted at a time when the matrix is stored as float16
_ANN_FILTER_EXACT_LIMIT = 50_000  # filtered searches this small stay exact even in the ANN tier

_ann_missing_logged = False


def normalize_rows(matrix: Any) -> FloatArray:
    """Return a C-contiguous float32 copy-or-view of ``matrix`` with unit-length rows (zero rows stay zero)."""
    out = np.ascontiguousarray(matrix, dtype=np.float32)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    if np.allclose(norms, 1.0, atol=1e-4):
        return out
    norms[norms == 0] = 1.0
    return (out / norms).astype(np.float32, copy=False)


@dataclass(frozen=True)
class _Rows:
    """One published state of the index; readers use it without taking the lock.

    The arrays have spare capacity past ``n``; writers only ever write past ``n`` or flip a
    tombstone, so a reader holding an older ``_Rows`` always sees consistent rows.
    """

    matrix: np.ndarray  # (capacity, dim), float32 (or float16 once the ANN tier owns ranking)
    ids: IdArray  # (capacity,)
    alive: BoolArray  # (capacity,)
    n: int
    live: int
    row_of: dict[int, int]


class VectorIndex:
    """Cosine top-k over unit vectors keyed by int64 ids; one writer, many lock-free readers."""

    def __init__(
        self,
        dim: int,
        *,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
        capacity: int = _MIN_CAPACITY,
        ann_background: bool = True,
    ) -> None:
        if dim <= 0:
            raise ValueError(f"dimension must be positive, got {dim}")
        self.dim = dim
        self.ann_threshold = ann_threshold
        self._ann_background = ann_background
        self._write_lock = threading.RLock()
        self._allowed_cache: tuple[_Rows, frozenset[Any], IdArray | None] | None = None
        cap = max(capacity, _MIN_CAPACITY)
        self._rows = _Rows(
            np.zeros((cap, dim), np.float32),
            np.full(cap, -1, np.int64),
            np.zeros(cap, np.bool_),
            0,
            0,
            {},
        )
        self._ann: _AnnTier | None = None
        self._ann_thread: threading.Thread | None = None
        self._removed_during_build: set[int] = set()

    @classmethod
    def from_arrays(
        cls,
        ids: Any,
        matrix: Any,
        *,
        dim: int | None = None,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
        ann_background: bool = True,
    ) -> VectorIndex:
        """Build an index from a loaded (ids, matrix) pair in one copy."""
        ids_arr = np.asarray(ids, dtype=np.int64)
        width = dim if dim is not None else (np.asarray(matrix).shape[1] if len(ids_arr) else 1)
        index = cls(
            width,
            ann_threshold=ann_threshold,
            capacity=len(ids_arr) + _MIN_CAPACITY,
            ann_background=ann_background,
        )
        if len(ids_arr):
            index.add(ids_arr, matrix)
        return index

    # ----- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._rows.live

    def __contains__(self, item_id: object) -> bool:
        return isinstance(item_id, (int, np.integer)) and int(item_id) in self._rows.row_of

    def get(self, item_id: int) -> FloatArray | None:
        """The stored (unit) vector of ``item_id`` as float32, or None."""
        rows = self._rows
        row = rows.row_of.get(int(item_id))
        if row is None or row >= rows.n:
            return None
        return np.asarray(rows.matrix[row], dtype=np.float32).copy()

    def row_ids(self) -> IdArray:
        """Ids of the current rows in row order (tombstoned rows included), for building row masks."""
        rows = self._rows
        return rows.ids[: rows.n].copy()

    @property
    def ann_active(self) -> bool:
        return self._ann is not None and self._ann.ready

    def wait_ann(self, timeout: float | None = None) -> bool:
        """Block until a pending ANN build finishes; True when the ANN tier is serving."""
        thread = self._ann_thread
        if thread is not None:
            thread.join(timeout)
        return self.ann_active

    def stats(self) -> dict[str, object]:
        rows = self._rows
        return {
            "dim": self.dim,
            "rows": rows.n,
            "live": rows.live,
            "tombstones": rows.n - rows.live,
            "capacity": rows.matrix.shape[0],
            "dtype": str(rows.matrix.dtype),
            "bytes": int(rows.matrix.nbytes + rows.ids.nbytes + rows.alive.nbytes),
            "ann": "ready" if self.ann_active else ("building" if self._ann_thread else "off"),
        }

    def search(self, query: Any, k: int, allowed: Any = None) -> list[tuple[int, float]]:
        """Top-``k`` (id, cosine) pairs, best first.

        ``allowed`` is None, a boolean mask over ``row_ids()`` (rows past its end are excluded),
        or a collection/array of allowed ids.
        """
        q = self._prepare_query(query)
        rows = self._rows
        if k <= 0 or rows.live == 0:
            return []
        ann = self._ann
        if ann is not None and ann.ready:
            return self._search_ann(ann, rows, q, k, allowed)
        return _search_exact(rows, q, k, self._allowed_rows(rows, allowed))

    def _allowed_rows(self, rows: _Rows, allowed: Any) -> IdArray | None:
        """`_resolve_allowed`, remembered for the last (published rows, frozenset) pair: a scope's id set is
        searched again and again, and turning 10K ids into row numbers costs more than the scan itself.
        None when the set admits every live row (the unfiltered scan is cheaper than a gather)."""
        if not isinstance(allowed, frozenset):
            return _resolve_allowed(rows, allowed)
        cached = self._allowed_cache
        if cached is not None and cached[0] is rows and cached[1] is allowed:
            return cached[2]
        resolved = _resolve_allowed(rows, allowed)
        if resolved is not None and len(resolved) == rows.live:
            resolved = None
        self._allowed_cache = (rows, allowed, resolved)
        return resolved

    def _prepare_query(self, query: Any) -> FloatArray:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise EmbeddingError(
                f"query vector has dimension {q.shape[0]} but the index holds "
                f"dimension {self.dim}; the stored vectors need a reindex"
            )
        norm = float(np.linalg.norm(q))
        return q / norm if norm > 0 else q

    def _search_ann(
        self, ann: _AnnTier, rows: _Rows, q: FloatArray, k: int, allowed: Any
    ) -> list[tuple[int, float]]:
        rows_allowed = self._allowed_rows(rows, allowed)
        if rows_allowed is not None and len(rows_allowed) <= _ANN_FILTER_EXACT_LIMIT:
            return _search_exact(rows, q, k, rows_allowed)
        wanted = max(4 * k, 64)
        while True:
            keys = ann.search(q, wanted)
            cand = np.fromiter((rows.row_of.get(int(key), -1) for key in keys), np.int64, len(keys))
            cand = cand[(cand >= 0) & (cand < rows.n)]
            if rows_allowed is not None:
                cand = np.intersect1d(cand, rows_allowed, assume_unique=False)
            if len(cand) >= min(k, rows.live) or wanted >= 4096:
                break
            wanted *= 4
        if len(cand) < k and rows_allowed is not None:
            return _search_exact(rows, q, k, rows_allowed)
        return _rank(rows, cand, _score_rows(rows.matrix, cand, q), k)

    # ----- writing -----------------------------------------------------------------------------

    def add(self, ids: Any, vectors: Any) -> None:
        """Insert or replace vectors; rows are normalised; no full rebuild (amortised growth)."""
        ids_arr = np.asarray(ids, dtype=np.int64).reshape(-1)
        mat = normalize_rows(vectors)
        if mat.shape != (len(ids_arr), self.dim):
            raise EmbeddingError(
                f"expected {len(ids_arr)} vectors of dimension {self.dim}, got shape {mat.shape}"
            )
        if not len(ids_arr):
            return
        ids_arr, mat = _last_wins(ids_arr, mat)
        with self._write_lock:
            self._tombstone(ids_arr)
            self._append(ids_arr, mat)
            ann = self._ann
            if ann is not None:
                ann.add(ids_arr, mat)
            self._maybe_start_ann()

    def remove(self, ids: Any) -> int:
        """Tombstone the given ids; returns how many were present."""
        ids_arr = np.asarray(
            list(ids) if not isinstance(ids, np.ndarray) else ids, np.int64
        ).reshape(-1)
        with self._write_lock:
            removed = self._tombstone(ids_arr)
            if self._ann is not None and removed:
                self._ann.remove(removed)
            if self._ann_thread is not None:
                self._removed_during_build.update(removed)
            rows = self._rows
            building = self._ann_thread is not None
            if (
                not building
                and rows.n > _MIN_CAPACITY
                and rows.n - rows.live > _COMPACT_RATIO * rows.n
            ):
                self.compact()
        return len(removed)

    def compact(self) -> None:
        """Rewrite the matrix without tombstoned rows (readers keep the old arrays until done)."""
        with self._write_lock:
            rows = self._rows
            keep = np.flatnonzero(rows.alive[: rows.n])
            cap = max(int(len(keep) * _GROWTH), _MIN_CAPACITY)
            matrix = np.zeros((cap, self.dim), rows.matrix.dtype)
            matrix[: len(keep)] = rows.matrix[keep]
            ids = np.full(cap, -1, np.int64)
            ids[: len(keep)] = rows.ids[keep]
            alive = np.zeros(cap, np.bool_)
            alive[: len(keep)] = True
            row_of = {int(i): r for r, i in enumerate(ids[: len(keep)])}
            self._rows = _Rows(matrix, ids, alive, len(keep), len(keep), row_of)

    def _tombstone(self, ids_arr: IdArray) -> list[int]:
        rows = self._rows
        removed: list[int] = []
        for item_id in ids_arr.tolist():
            row = rows.row_of.pop(item_id, None)
            if row is not None:
                rows.alive[row] = False
                removed.append(item_id)
        if removed:
            self._rows = _Rows(
                rows.matrix, rows.ids, rows.alive, rows.n, rows.live - len(removed), rows.row_of
            )
        return removed

    def _append(self, ids_arr: IdArray, mat: FloatArray) -> None:
        rows = self._rows
        m = len(ids_arr)
        if rows.n + m > rows.matrix.shape[0]:
            rows = self._grow(rows, rows.n + m)
        start, end = rows.n, rows.n + m
        rows.matrix[start:end] = mat
        rows.ids[start:end] = ids_arr
        rows.alive[start:end] = True
        rows.row_of.update(zip(ids_arr.tolist(), range(start, end), strict=True))
        self._rows = _Rows(rows.matrix, rows.ids, rows.alive, end, rows.live + m, rows.row_of)

    def _grow(self, rows: _Rows, needed: int) -> _Rows:
        cap = max(int(rows.matrix.shape[0] * _GROWTH), needed, _MIN_CAPACITY)
        matrix = np.zeros((cap, self.dim), rows.matrix.dtype)
        matrix[: rows.n] = rows.matrix[: rows.n]
        ids = np.full(cap, -1, np.int64)
        ids[: rows.n] = rows.ids[: rows.n]
        alive = np.zeros(cap, np.bool_)
        alive[: rows.n] = rows.alive[: rows.n]
        return _Rows(matrix, ids, alive, rows.n, rows.live, dict(rows.row_of))

    # ----- ANN tier ----------------------------------------------------------------------------

    def _maybe_start_ann(self) -> None:
        if (
            self._ann is not None
            or self._ann_thread is not None
            or self._rows.live < self.ann_threshold
        ):
            return
        tier = _AnnTier.create(self.dim)
        if tier is None:
            return
        if not self._ann_background:
            self._build_ann(tier)
            return
        self._removed_during_build.clear()
        self._ann_thread = threading.Thread(
            target=self._build_ann_logged, args=(tier,), name="bowerbird-ann-build", daemon=True
        )
        self._ann_thread.start()

    def _build_ann_logged(self, tier: _AnnTier) -> None:
        try:
            self._build_ann(tier)
        except (MemoryError, RuntimeError, ValueError):
            log.error("building the ANN tier failed; searches stay exact", exc_info=True)
            with self._write_lock:
                self._ann_thread = None
                self.ann_threshold = 2**62  # do not retry on every write

    def _build_ann(self, tier: _AnnTier) -> None:
        rows = self._rows
        live = np.flatnonzero(rows.alive[: rows.n])
        log.info("building the ANN tier over %d vectors", len(live))
        for start in range(0, len(live), _CHUNK_ROWS):
            chunk = live[start : start + _CHUNK_ROWS]
            tier.add(rows.ids[chunk], np.asarray(rows.matrix[chunk], np.float32), replace=False)
        with self._write_lock:
            self._catch_up(tier, rows.n)
            self._rows = _to_float16(self._rows)
            tier.ready = True
            self._ann = tier
            self._ann_thread = None
        log.info("ANN tier ready (%d vectors)", tier.size())

    def _catch_up(self, tier: _AnnTier, built_n: int) -> None:
        rows = self._rows
        if self._removed_during_build:
            tier.remove(sorted(self._removed_during_build))
            self._removed_during_build.clear()
        if rows.n > built_n:
            extra = built_n + np.flatnonzero(rows.alive[built_n : rows.n])
            if len(extra):
                tier.add(rows.ids[extra], np.asarray(rows.matrix[extra], np.float32))


class _AnnTier:
    """An HNSW graph (usearch, int8 storage) that proposes candidates; scores come from the matrix."""

    CONNECTIVITY = 16
    EXPANSION_ADD = 128
    EXPANSION_SEARCH = 128

    def __init__(self, index: Any) -> None:
        self._index = index
        self._lock = threading.Lock()
        self.ready = False

    @classmethod
    def create(cls, dim: int) -> _AnnTier | None:
        global _ann_missing_logged
        try:
            from usearch.index import Index
        except ImportError:
            if not _ann_missing_logged:
                log.warning(
                    "usearch is not installed (pip install 'hermes-bowerbird[ann]'); "
                    "large vector indexes use exact search"
                )
                _ann_missing_logged = True
            return None
        return cls(
            Index(
                ndim=dim,
                metric="cos",
                dtype="i8",
                connectivity=cls.CONNECTIVITY,
                expansion_add=cls.EXPANSION_ADD,
                expansion_search=cls.EXPANSION_SEARCH,
            )
        )

    def add(self, ids: IdArray, mat: FloatArray, *, replace: bool = True) -> None:
        keys = np.asarray(ids, np.uint64)
        with self._lock:
            if replace:
                present = keys[np.asarray(self._index.contains(keys), np.bool_).reshape(-1)]
                if len(present):
                    self._index.remove(present)
            self._index.add(keys, mat)

    def remove(self, ids: Collection[int]) -> None:
        with self._lock:
            self._index.remove(np.asarray(list(ids), np.uint64))

    def search(self, q: FloatArray, count: int) -> IdArray:
        with self._lock:
            matches = self._index.search(q, count)
        return np.asarray(matches.keys, dtype=np.int64)

    def size(self) -> int:
        return int(self._index.size)


def _to_float16(rows: _Rows) -> _Rows:
    """Halve the matrix once the ANN tier ranks candidates (keeps 1M x 384 inside the memory budget)."""
    if rows.matrix.dtype == np.float16:
        return rows
    matrix = np.zeros(rows.matrix.shape, np.float16)
    for start in range(0, rows.n, _CHUNK_ROWS):
        stop = min(start + _CHUNK_ROWS, rows.n)
        matrix[start:stop] = rows.matrix[start:stop]
    return _Rows(matrix, rows.ids, rows.alive, rows.n, rows.live, rows.row_of)


def _last_wins(ids_arr: IdArray, mat: FloatArray) -> tuple[IdArray, FloatArray]:
    if len(np.unique(ids_arr)) == len(ids_arr):
        return ids_arr, mat
    last = {int(i): pos for pos, i in enumerate(ids_arr)}
    keep = np.fromiter(last.values(), np.int64, len(last))
    return ids_arr[keep], mat[keep]


def _resolve_allowed(rows: _Rows, allowed: Any) -> IdArray | None:
    """Turn a mask or an id collection into sorted live row numbers (None means every row)."""
    if allowed is None:
        return None
    if isinstance(allowed, np.ndarray) and allowed.dtype == np.bool_:
        mask = allowed[: rows.n]
        live = np.flatnonzero(mask & rows.alive[: len(mask)])
        return live.astype(np.int64)
    ids = allowed if isinstance(allowed, np.ndarray) else np.fromiter(allowed, np.int64)
    if len(ids) * 8 < rows.n:
        found = (rows.row_of.get(int(i)) for i in ids.tolist())
        picked = np.fromiter((r for r in found if r is not None and r < rows.n), np.int64)
        return np.unique(picked)
    hit = np.isin(rows.ids[: rows.n], ids) & rows.alive[: rows.n]
    return np.flatnonzero(hit).astype(np.int64)


def _search_exact(
    rows: _Rows, q: FloatArray, k: int, allowed_rows: IdArray | None
) -> list[tuple[int, float]]:
    n = rows.n
    if allowed_rows is not None and len(allowed_rows) < _GATHER_RATIO * n:
        return _rank(rows, allowed_rows, _score_rows(rows.matrix, allowed_rows, q), k)
    scores = _score_all(rows.matrix, n, q)
    if allowed_rows is not None:
        keep = np.zeros(n, np.bool_)
        keep[allowed_rows] = True
        scores[~keep] = -np.inf
        live = len(allowed_rows)
    else:
        if rows.live < n:
            scores[~rows.alive[:n]] = -np.inf
        live = rows.live
    k = min(k, live)
    if k <= 0:
        return []
    top = np.argpartition(scores, n - k)[n - k :] if k < n else np.arange(n)
    top = top[np.argsort(-scores[top], kind="stable")]
    top = top[np.isfinite(scores[top])]  # a row tombstoned while this search ran
    return list(zip(rows.ids[top].tolist(), scores[top].tolist(), strict=True))


def _rank(rows: _Rows, cand: IdArray, scores: FloatArray, k: int) -> list[tuple[int, float]]:
    if not len(cand):
        return []
    k = min(k, len(cand))
    top = (
        np.argpartition(scores, len(scores) - k)[len(scores) - k :]
        if k < len(scores)
        else np.arange(len(scores))
    )
    top = top[np.argsort(-scores[top], kind="stable")]
    return list(zip(rows.ids[cand[top]].tolist(), scores[top].tolist(), strict=True))


_BLAS_ROWS = 1024  # small enough that OpenBLAS runs each product on the calling thread alone
_BLAS_MAX_ROWS = 32_768  # above this the scan is memory-bound and einsum is as fast


def _dot_rows(block: np.ndarray, q: FloatArray) -> FloatArray:
    """Row-wise dot products, measured on two cores with the other one busy (10K x 384):

    BLAS sgemv on the whole block splits it over both cores and then waits on the busy one (p50 0.12 ms but
    p95 8 ms); in slices of 1,024 rows each call stays on this thread (p50 0.30, p95 0.39 ms); numpy's einsum
    loop gives 0.56 / 0.63 ms. Past ~32K rows the scan is memory-bound and einsum matches BLAS (6.2 ms at 100K).
    """
    if len(block) > _BLAS_MAX_ROWS:
        return np.einsum("ij,j->i", block, q)
    out = np.empty(len(block), np.float32)
    for start in range(0, len(block), _BLAS_ROWS):
        np.matmul(block[start : start + _BLAS_ROWS], q, out=out[start : start + _BLAS_ROWS])
    return out


def _score_all(matrix: np.ndarray, n: int, q: FloatArray) -> FloatArray:
    if matrix.dtype == np.float32:
        return _dot_rows(matrix[:n], q)
    out = np.empty(n, np.float32)
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(start + _CHUNK_ROWS, n)
        out[start:stop] = _dot_rows(matrix[start:stop].astype(np.float32), q)
    return out


def _score_rows(matrix: np.ndarray, row_idx: IdArray, q: FloatArray) -> FloatArray:
    return _dot_rows(matrix[row_idx].astype(np.float32, copy=False), q)


# ----- one index per (database, kind, model) --------------------------------------------------

Loader = Callable[[], "tuple[Any, Any]"]


class IndexRegistry:
    """The indexes of each (database file, kind, model), so every engine over a file shares one copy of the
    vectors, and each file's reindex lock. Its owner drops a file's entries when the file is closed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str, str], VectorIndex] = {}
        self._loading: dict[tuple[str, str, str], threading.Lock] = {}
        self._reindexing: dict[str, threading.Lock] = {}

    def get(
        self,
        db_path: str | Path,
        kind: str,
        model: str,
        dim: int,
        loader: Loader,
        *,
        ann_threshold: int = DEFAULT_ANN_THRESHOLD,
    ) -> VectorIndex:
        """The index for this key, loading it through ``loader`` -> (ids, matrix) the first time."""
        key = (_db_key(db_path), str(kind), model)
        with self._lock:
            index = self._indexes.get(key)
            if index is not None and index.dim == dim:
                return index
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:
            index = self._indexes.get(key)
            if index is not None and index.dim == dim:
                return index
            index = _load_index(loader, dim, ann_threshold, key)
            with self._lock:
                self._indexes[key] = index
            return index

    def peek(self, db_path: str | Path, kind: str, model: str) -> VectorIndex | None:
        with self._lock:
            return self._indexes.get((_db_key(db_path), str(kind), model))

    def reindex_lock(self, db_path: str | Path) -> threading.Lock:
        """The lock a reindex of this database holds, so that one reindexer runs per file."""
        with self._lock:
            return self._reindexing.setdefault(_db_key(db_path), threading.Lock())

    def drop(self, db_path: str | Path) -> None:
        """Forget every index and lock of one database (after it is closed or deleted)."""
        db = _db_key(db_path)
        with self._lock:
            for key in [k for k in self._indexes if k[0] == db]:
                del self._indexes[key]
            for key in [k for k in self._loading if k[0] == db]:
                del self._loading[key]
            self._reindexing.pop(db, None)

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()
            self._loading.clear()
            self._reindexing.clear()


@functools.lru_cache(maxsize=256)
def _db_key(db_path: str | Path) -> str:
    """What names a database: a file's resolved path, or a server's address as the store gives it."""
    text = str(db_path)
    return text if text == ":memory:" or "://" in text else str(Path(text).expanduser().resolve())


def _load_index(
    loader: Loader, dim: int, ann_threshold: int, key: tuple[str, str, str]
) -> VectorIndex:
    try:
        ids, matrix = loader()
    except DatabaseError as exc:
        log.warning(
            "cannot load %s vectors for model %s (%s); starting empty until reindexed",
            key[1],
            key[2],
            exc,
        )
        return VectorIndex(dim, ann_threshold=ann_threshold)
    ids_arr = np.asarray(ids, np.int64)
    mat = np.asarray(matrix, np.float32)
    if len(ids_arr) and (mat.ndim != 2 or mat.shape[1] != dim):
        log.warning(
            "stored %s vectors for model %s have shape %s, expected dimension %d; "
            "starting empty until reindexed",
            key[1],
            key[2],
            mat.shape,
            dim,
        )
        return VectorIndex(dim, ann_threshold=ann_threshold)
    return VectorIndex.from_arrays(
        ids_arr, mat.reshape(-1, dim), dim=dim, ann_threshold=ann_threshold
    )
