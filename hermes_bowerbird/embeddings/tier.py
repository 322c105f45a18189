"""The vector tier as the rest of the engine sees it: embed, store, index and search by meaning."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidInputError
from ..types import Embedder, ItemKind
from .cache import query_vector
from .index import VectorIndex
from .reindex import KINDS, reindex_all, shared_index

if TYPE_CHECKING:
    from ..store import Store
    from .service import EmbeddingService

log = logging.getLogger(__name__)


class VectorTier:
    """Keeps the stored vectors and the shared in-memory indexes (the service's registry) in step, for the
    active model.

    Everything degrades quietly while the model loads (or when there is none): `add` leaves items for
    `catch_up`, searches return nothing, and callers fall back to keyword and graph signals.
    """

    def __init__(
        self, store: Store, embeddings: EmbeddingService, *, ann_threshold: int = 200_000
    ) -> None:
        self.store = store
        self.embeddings = embeddings
        self.ann_threshold = ann_threshold

    def ready(self) -> bool:
        return self.embeddings.current() is not None

    def _embedder(self) -> Embedder | None:
        return self.embeddings.current()

    def index(self, kind: ItemKind) -> VectorIndex | None:
        """The shared in-memory index of this kind for the active model (loaded from the store on first use);
        None while no model is ready, and when the store ranks vectors itself."""
        embedder = self._embedder()
        if embedder is None or self.store.vectors.ranks_nearest:
            return None
        return shared_index(
            self.embeddings.indexes, self.store, kind, embedder, ann_threshold=self.ann_threshold
        )

    def embed_query(self, text: str) -> np.ndarray | None:
        """The query's vector, or None (search goes on by keyword and graph) when no model can give one."""
        embedder = self._embedder()
        if embedder is None or not text.strip():
            return None
        try:
            return query_vector(embedder, text)
        except Exception:  # a broken model must cost the vector signal, never the search
            log.warning(
                "query embedding failed; searching without the vector signal", exc_info=True
            )
            return None

    def add(self, kind: ItemKind, items: Sequence[tuple[int, str]]) -> int:
        """Embed, store and index these items; 0 (left for catch_up) when no model is ready."""
        embedder = self._embedder()
        if embedder is None or not items:
            return 0
        index = self.index(kind)
        if index is None and not self.store.vectors.ranks_nearest:
            return 0
        matrix = np.asarray(embedder.embed_batch([text for _, text in items]), dtype=np.float32)
        ids = [item_id for item_id, _ in items]
        self.store.vectors.put(kind, embedder.model_name, list(zip(ids, matrix, strict=True)))
        if index is not None:
            index.add(np.asarray(ids, dtype=np.int64), matrix)
        return len(items)

    def remove(self, kind: ItemKind, ids: Sequence[int]) -> None:
        self.store.vectors.delete(kind, ids)
        index = self.index(kind)
        if index is not None:
            index.remove(np.asarray(ids, dtype=np.int64))

    def search(
        self,
        kind: ItemKind,
        vector: np.ndarray,
        k: int,
        allowed: Collection[int] | None = None,
        scopes: Sequence[str] | None = None,
    ) -> list[tuple[int, float]]:
        """The `k` items (of `allowed`, when given) most similar to `vector`, best first. A store that ranks
        vectors itself searches `scopes` only, which it must be given."""
        embedder = self._embedder()
        if embedder is None:
            return []
        if self.store.vectors.ranks_nearest:
            if scopes is None:
                raise InvalidInputError(
                    "a vector search of a shared store names the scopes it reads"
                )
            found = self.store.vectors.nearest(kind, embedder.model_name, vector, k, scopes)
            return [hit for hit in found if allowed is None or hit[0] in allowed]
        index = self.index(kind)
        if index is None or len(index) == 0:
            return []
        return index.search(vector, k, allowed)

    def vectors(self, kind: ItemKind, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Vectors of these items of the active model (from the in-memory index, or the store's ranking)."""
        embedder = self._embedder()
        if embedder is not None and self.store.vectors.ranks_nearest:
            return self.store.vectors.get_many(kind, embedder.model_name, embedder.dimension, ids)
        index = self.index(kind)
        if index is None:
            return {}
        out = {}
        for item_id in ids:
            vector = index.get(int(item_id))
            if vector is not None:
                out[int(item_id)] = vector
        return out

    def catch_up(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every item that has no vector from the loaded model (new, or embedded by another model, whose
        vector it replaces); searches use vectors again once no other model's are left."""
        embedder = self.embeddings.loaded()
        if embedder is None:
            return 0

        before, total = {}, 0
        for kind in KINDS:  # one count over both kinds: each kind's starts after those before it
            before[kind] = total
            total += self.store.vectors.count_missing(kind, embedder.model_name, embedder.dimension)

        def report(kind: ItemKind, done: int, _kind_total: int) -> None:
            if progress is not None and total:
                progress(before[kind] + done, max(total, before[kind] + done))

        done = reindex_all(
            self.store,
            embedder,
            self.embeddings.indexes,
            ann_threshold=self.ann_threshold,
            progress=report,
        )
        self.embeddings.check_store()
        return done
