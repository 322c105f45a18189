"""Small scopes' vectors held in this host's memory and ranked here, as SQLite's are, instead of by the server.

Ranking a user's 4,000 vectors exactly costs the server 4-6 ms a search; the same product here costs well under
one. What is held stays in step with every host's writes through the stamps of migration 0007: before each search
one short statement reads, for each scope searched, its highest stamp and its count of rows gone. Rows stamped
after those held are read alone (a turn's new memory is a row or two); a scope whose count of rows gone has moved
is dropped and read again whole.

A scope not held yet is read in the background, one at a time, while the server ranks it; what is held is bounded
in bytes, and the scopes searched least recently are let go first, so a gateway of many users cannot fill memory.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...types import ItemKind
from .connection import ServerConnection
from .wire import sent_rows

log = logging.getLogger(__name__)

HELD_BYTES = 256 * 2**20  # what one host holds at most, over every scope, kind and model
# items written and not read back since, past which everything held is read again
_WRITTEN_AT_MOST = 100_000
# how long the marks one search read serve the kinds it ranks after the first
MARKS_FRESH_SECONDS = 0.2
_MARKS_KEPT = 1_000  # sets of scopes whose marks are kept, past which all are read again
_KINDS = tuple(str(kind) for kind in ItemKind)

Key = tuple[str, str, str, int]  # scope, kind, model, dimension


@dataclass
class _Scope:
    """One scope's vectors of one kind and model: unit rows (for cosine) in arrays with room to grow."""

    stamp: int  # every row stamped up to here has been read
    gone: int  # the scope's count of rows gone when it was read whole
    dim: int
    ids: np.ndarray = field(init=False)
    stamps: np.ndarray = field(init=False)
    matrix: np.ndarray = field(init=False)
    size: int = 0
    rows: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ids = np.empty(0, np.int64)
        self.stamps = np.empty(0, np.int64)
        self.matrix = np.empty((0, self.dim), np.float32)

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.ids.nbytes + self.stamps.nbytes)

    def put(self, ids: np.ndarray, stamps: np.ndarray, vectors: np.ndarray) -> None:
        """Add or replace rows; a row is replaced only by a later stamp (two searches may read the same change)."""
        for item_id, stamp, vector in zip(ids.tolist(), stamps.tolist(), vectors, strict=True):
            row = self.rows.get(item_id)
            if row is None:
                self._grow()
                row = self.size
                self.size += 1
                self.rows[item_id] = row
                self.ids[row] = item_id
            elif self.stamps[row] > stamp:
                continue
            self.stamps[row] = stamp
            self.matrix[row] = vector

    def drop(self, item_ids: Sequence[int]) -> None:
        """Rows no longer of this model (re-embedded by another): the arrays are built anew, so a search that took
        the old ones meanwhile ranks them unchanged."""
        keep = np.ones(self.size, bool)
        for item_id in item_ids:
            row = self.rows.pop(item_id, None)
            if row is not None:
                keep[row] = False
        if keep.all():
            return
        self.ids, self.stamps, self.matrix = (
            self.ids[: self.size][keep],
            self.stamps[: self.size][keep],
            self.matrix[: self.size][keep],
        )
        self.size = len(self.ids)
        self.rows = {int(item_id): row for row, item_id in enumerate(self.ids.tolist())}

    def _grow(self) -> None:
        if self.size < len(self.ids):
            return
        room = max(16, 2 * len(self.ids))
        # new arrays: a search ranking the old ones meanwhile keeps them whole
        ids, stamps = np.empty(room, np.int64), np.empty(room, np.int64)
        matrix = np.empty((room, self.dim), np.float32)
        ids[: self.size], stamps[: self.size] = self.ids[: self.size], self.stamps[: self.size]
        matrix[: self.size] = self.matrix[: self.size]
        self.ids, self.stamps, self.matrix = ids, stamps, matrix

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        return self.ids[: self.size], self.matrix[: self.size]


def unit_rows(raw: Sequence[bytes], dim: int) -> np.ndarray:
    """Vectors in pgvector's binary form, all of `dim` dimensions, as unit float32 rows (a zero row stays zero)."""
    return _unit(sent_rows(raw, dim))


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


class HeldVectors:
    """The scopes this host holds, and the one background reader that fetches those it does not yet."""

    def __init__(self, db: ServerConnection, budget: int = HELD_BYTES) -> None:
        self._db = db
        self._budget = budget
        self._lock = threading.Lock()
        self._held: OrderedDict[Key, _Scope] = OrderedDict()  # least recently searched first
        self._wanted: OrderedDict[Key, None] = OrderedDict()
        self._reader: threading.Thread | None = None
        self._closed = False
        # items this process wrote: (kind, item id) -> the stamp held for it then (0: none). Until a read brings
        # a row stamped later, their vectors come from the server: the write may not have committed yet, or may
        # have been rolled back
        self._written: dict[tuple[str, int], int] = {}
        self._writes = 0  # vector writes of this process so far
        # the marks last read for a set of scopes: (writes then, when, marks by (scope, kind))
        self._read_marks: dict[
            tuple[str, ...], tuple[int, float, dict[tuple[str, str], tuple[int, int]]]
        ] = {}

    def nearest(
        self, kind: ItemKind, model: str, query: np.ndarray, k: int, scopes: Sequence[str]
    ) -> list[tuple[int, float]] | None:
        """The `k` held vectors of these scopes most similar to `query` (cosine), best first; None when a scope is
        not held (yet): it is read in the background, and the server ranks this search."""
        dim = int(query.shape[-1])
        keys = [(scope, str(kind), model, dim) for scope in sorted(set(scopes))]
        marks = self._marks(str(kind), [key[0] for key in keys])
        views = []
        missing = []
        for key in keys:
            stamp, gone = marks[key[0]]
            held = self._current(key, gone)
            if held is None:
                missing.append(key)
                continue
            if stamp > held.stamp:
                self._read_since(key, held, stamp)
            with self._lock:
                views.append(held.view())
        if missing:
            self._want(missing)
            return None
        return _ranked(views, _unit(np.asarray(query, np.float32).reshape(1, dim))[0], k)

    def vectors(
        self, kind: ItemKind, model: str, dim: int, ids: Sequence[int]
    ) -> dict[int, np.ndarray]:
        """The held vectors (unit rows) of those of these items that are held and this process has not written
        since: as fresh as their scope's last search, which read what every host wrote until then."""
        out: dict[int, np.ndarray] = {}
        with self._lock:
            for key, held in self._held.items():
                if key[1:] != (str(kind), model, dim):
                    continue
                for item_id in ids:
                    row = held.rows.get(item_id)
                    if row is not None and (key[1], item_id) not in self._written:
                        out[item_id] = held.matrix[row].copy()
        return out

    def written(self, kind: ItemKind, ids: Sequence[int]) -> None:
        """This process is writing (or deleting) these items' vectors."""
        with self._lock:
            self._writes += 1
            for item_id in ids:
                stamps = [
                    int(held.stamps[held.rows[item_id]])
                    for key, held in self._held.items()
                    if key[1] == str(kind) and item_id in held.rows
                ]
                self._written[(str(kind), int(item_id))] = max(stamps, default=0)
            # an item deleted, or whose write was rolled back, is never read back: past a bound, all is read anew
            if len(self._written) > _WRITTEN_AT_MOST:
                self._written.clear()
                self._held.clear()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wanted.clear()
            self._held.clear()

    def _marks(self, kind: str, scopes: list[str]) -> dict[str, tuple[int, int]]:
        """(highest stamp, count of rows gone) of each scope's vectors of this kind.

        One statement reads them for every kind: a search ranks each kind in turn, and the kinds after the first
        take what it read when that is at most MARKS_FRESH_SECONDS old and this process has written no vector
        since (what another host wrote meanwhile is seen by the next search, as if this one had begun a moment
        sooner)."""
        key = tuple(scopes)
        now = time.monotonic()
        with self._lock:
            cached = self._read_marks.get(key)
            if (
                cached is not None
                and cached[0] == self._writes
                and now - cached[1] <= MARKS_FRESH_SECONDS
            ):
                return {scope: cached[2][(scope, kind)] for scope in scopes}
            writes = self._writes
        rows = self._db.query(
            """
            SELECT s.scope, k.kind,
                   coalesce((SELECT max(e.stamp) FROM embeddings e WHERE e.scope = s.scope AND e.kind = k.kind), 0),
                   coalesce((SELECT g.gone FROM embedding_scopes g WHERE g.scope = s.scope AND g.kind = k.kind), 0)
            FROM unnest(?::text[]) AS s(scope)
            CROSS JOIN unnest(?::text[]) AS k(kind)
        """,
            (scopes, list(_KINDS)),
        )
        marks = {(str(row[0]), str(row[1])): (int(row[2]), int(row[3])) for row in rows}
        with self._lock:
            if len(self._read_marks) >= _MARKS_KEPT:
                self._read_marks.clear()
            self._read_marks[key] = (writes, now, marks)
        return {scope: marks[(scope, kind)] for scope in scopes}

    def _current(self, key: Key, gone: int) -> _Scope | None:
        """The held scope, if its rows gone are those it was read with (else it is let go, to be read again)."""
        with self._lock:
            held = self._held.get(key)
            if held is None:
                return None
            if held.gone != gone:
                del self._held[key]
                return None
            self._held.move_to_end(key)
            return held

    def _read_since(self, key: Key, held: _Scope, stamp: int) -> None:
        """The scope's rows of this kind stamped after those held: added or rewritten, by any host."""
        scope, kind, model, dim = key
        rows = self._db.query(
            """
            SELECT item_id, model, dim, stamp, vector_send(vector) AS vector
            FROM embeddings
            WHERE scope = ? AND kind = ? AND stamp > ?
        """,
            (scope, kind, held.stamp),
            binary=True,
        )
        mine = [row[1] == model and int(row[2]) == dim for row in rows]
        ours = [row for row, of_model in zip(rows, mine, strict=True) if of_model]
        others = [int(row[0]) for row, of_model in zip(rows, mine, strict=True) if not of_model]
        ids = np.array([int(row[0]) for row in ours], np.int64)
        stamps = np.array([int(row[3]) for row in ours], np.int64)
        vectors = unit_rows([bytes(row[4]) for row in ours], dim)
        with self._lock:
            held.put(ids, stamps, vectors)
            self._read_back(kind, ids, stamps)
            if others:
                held.drop(others)
            held.stamp = max(held.stamp, stamp, *(int(row[3]) for row in rows))
            self._fit()

    def _want(self, keys: list[Key]) -> None:
        with self._lock:
            if self._closed:
                return
            for key in keys:
                self._wanted[key] = None
            if self._reader is not None and self._reader.is_alive():
                return
            self._reader = threading.Thread(
                target=self._read_wanted, name="bowerbird-held-vectors", daemon=True
            )
            self._reader.start()

    def _read_wanted(self) -> None:
        while True:
            with self._lock:
                if self._closed or not self._wanted:
                    self._reader = None
                    return
                key, _ = self._wanted.popitem(last=False)
                if key in self._held:
                    continue
            try:
                held = self._read_whole(key)
            except Exception:  # the server goes on ranking this scope; a later search asks again
                if self._closed:  # the store closed under the read
                    return
                log.warning("could not read the vectors of one scope into memory", exc_info=True)
                continue
            with self._lock:
                if self._closed:
                    return
                if held.nbytes <= self._budget:
                    self._held[key] = held
                    self._read_back(key[1], held.ids, held.stamps)
                    self._fit()

    def _read_whole(self, key: Key) -> _Scope:
        scope, kind, model, dim = key
        stamp, gone = self._marks(kind, [scope])[scope]
        rows = self._db.query(
            """
            SELECT item_id, coalesce(stamp, 0) AS stamp, vector_send(vector) AS vector
            FROM embeddings
            WHERE scope = ? AND kind = ? AND model = ? AND dim = ?
        """,
            (scope, kind, model, dim),
            binary=True,
        )
        held = _Scope(stamp=max([stamp, *(int(row[1]) for row in rows)]), gone=gone, dim=dim)
        held.ids = np.array([int(row[0]) for row in rows], np.int64)
        held.stamps = np.array([int(row[1]) for row in rows], np.int64)
        held.matrix = unit_rows([bytes(row[2]) for row in rows], dim)
        held.size = len(rows)
        held.rows = {item_id: row for row, item_id in enumerate(held.ids.tolist())}
        return held

    def _read_back(self, kind: str, ids: np.ndarray, stamps: np.ndarray) -> None:
        """Rows read from the server: an item this process wrote is served from memory again once a row of it
        stamped after its write is read (under the lock)."""
        if not self._written:
            return
        for item_id, stamp in zip(ids.tolist(), stamps.tolist(), strict=True):
            before = self._written.get((kind, item_id))
            if before is not None and stamp > before:
                del self._written[(kind, item_id)]

    def _fit(self) -> None:
        """Let go of the scopes searched least recently until what is held fits the budget (under the lock)."""
        total = sum(held.nbytes for held in self._held.values())
        while total > self._budget and self._held:
            _, held = self._held.popitem(last=False)
            total -= held.nbytes


def _ranked(
    views: list[tuple[np.ndarray, np.ndarray]], query: np.ndarray, k: int
) -> list[tuple[int, float]]:
    found: list[tuple[int, float]] = []
    for ids, matrix in views:
        if not len(ids):
            continue
        scores = matrix @ query
        top = np.argpartition(-scores, k - 1)[:k] if len(scores) > k else np.arange(len(scores))
        found.extend(zip(ids[top].tolist(), scores[top].tolist(), strict=True))
    found.sort(key=lambda hit: -hit[1])
    return [(int(i), float(s)) for i, s in found[:k]]
