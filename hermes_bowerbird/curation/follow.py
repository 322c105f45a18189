"""IndexFollower: a process's in-memory vector indexes catch up with vectors another process (the worker) stored."""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DatabaseError, EmbeddingError
from ..types import ItemKind

if TYPE_CHECKING:
    from ..embeddings.index import VectorIndex
    from ..embeddings.tier import VectorTier
    from ..store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Seen:
    model: str
    count: int
    top: int


class IndexFollower:
    """Before a search: when another connection committed since the last look, the indexes take in what changed.

    The common change is new items (ids above the highest one seen): only those vectors are read. Anything
    else (vectors written for old items, deletions) is found by comparing the stored ids with the index's.
    """

    def __init__(self, store: Store, vectors: VectorTier) -> None:
        self.store = store
        self.vectors = vectors
        self._lock = threading.Lock()
        self._version: int | None = None
        self._seen: dict[ItemKind, _Seen] = {}

    def follow(self) -> None:
        """Cheap when nothing changed elsewhere (one PRAGMA); never raises into a search: on a failure the
        search uses what the indexes hold."""
        try:
            self._catch_up()
        except (DatabaseError, sqlite3.Error, EmbeddingError):
            log.warning(
                "could not refresh the vector index from the store; searching what it holds",
                exc_info=True,
            )

    def _catch_up(self) -> None:
        if not self.vectors.ready() or self.store.vectors.ranks_nearest:
            return  # no model yet, or no in-memory index to keep: the server ranks the stored vectors itself
        with self._lock:
            version = self.store.db.data_version()
            if version == self._version:
                return
            for kind in ItemKind:
                self._follow(kind)
            self._version = version

    def _follow(self, kind: ItemKind) -> None:
        index = self.vectors.index(kind)
        embedder = self.vectors.embeddings.current()
        if index is None or embedder is None:
            return
        model, dim = embedder.model_name, embedder.dimension
        count, top = self.store.vectors.span(kind, model, dim)
        seen = self._seen.get(kind)
        if seen is not None and seen.model == model and (seen.count, seen.top) == (count, top):
            return
        if seen is not None and seen.model == model and top >= seen.top:
            ids, matrix = self.store.vectors.after(kind, model, dim, seen.top)
            if seen.count + len(ids) == count:  # only new items since the last look
                if len(ids):
                    index.add(ids, matrix)
                self._seen[kind] = _Seen(model, count, top)
                return
        self._reconcile(kind, model, index)
        self._seen[kind] = _Seen(model, count, top)

    def _reconcile(self, kind: ItemKind, model: str, index: VectorIndex) -> None:
        dim = index.dim
        stored = np.unique(self.store.vectors.ids(kind, model, dim))
        rows = np.unique(index.row_ids())
        held = rows[np.fromiter((int(i) in index for i in rows), dtype=bool, count=len(rows))]
        missing = np.setdiff1d(stored, held, assume_unique=True)
        extra = np.setdiff1d(held, stored, assume_unique=True)
        if len(missing):
            found = self.store.vectors.get_many(kind, model, dim, [int(i) for i in missing])
            if found:
                index.add(
                    np.fromiter(found, dtype=np.int64, count=len(found)),
                    np.stack(list(found.values())),
                )
        if len(extra):
            index.remove(extra)
        log.debug("%s index reconciled: %d added, %d removed", kind, len(missing), len(extra))
