"""The embedding cache: vectors kept by content hash (in the store) and recent queries (in memory)."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DatabaseError
from ..types import Embedder

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..store import Store

    FloatArray = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 256  # recent query vectors kept in memory


def cache_key(model: str, text: str) -> str:
    """sha256(model + NUL + text): the cache identity of one embedding."""
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()


def query_vector(embedder: Embedder, text: str) -> FloatArray:
    """A search query's vector: with the model's query prompt when the embedder knows one (`embed_query`, as the
    local runtimes and wrappers do), else embedded as any text."""
    embed_query = getattr(embedder, "embed_query", None)
    vector = embed_query(text) if callable(embed_query) else embedder.embed(text)
    return np.asarray(vector, np.float32)


class WrappedEmbedder:
    """Base for an Embedder that stands in front of another: same model, dimension and locality.

    Subclasses override `embed_batch` (texts to store; `embed` goes through it) and, to see queries too,
    `embed_query` (the inner model's query embedding, with its query prompt).
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def is_local(self) -> bool:
        return self.inner.is_local

    def embed(self, text: str) -> FloatArray:
        return self.embed_batch([text])[0]

    def embed_query(self, text: str) -> FloatArray:
        return query_vector(self.inner, text)

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        return self.inner.embed_batch(texts)


class CachedEmbedder(WrappedEmbedder):
    """Any Embedder behind the store's embedding cache: unchanged text is never embedded twice."""

    def __init__(self, inner: Embedder, store: Store) -> None:
        super().__init__(inner)
        self._store = store
        self._queries: OrderedDict[str, FloatArray] = OrderedDict()
        self._queries_lock = threading.Lock()

    def embed_query(self, text: str) -> FloatArray:
        """A search query's vector: from a small in-memory cache (a prefetch queued last turn, then asked for
        again), else embedded. A local model's query is not written to the persistent cache: questions are mostly
        new, and the write is a transaction (BEGIN IMMEDIATE, INSERT, COMMIT) that waits behind curation's writes.
        A remote model's queries still go through the persistent cache (each call costs a request)."""
        key = cache_key(self.model_name, text)
        with self._queries_lock:
            found = self._queries.get(key)
            if found is not None:
                self._queries.move_to_end(key)
                return found
        vector = query_vector(self.inner, text) if self.inner.is_local else self.embed(text)
        with self._queries_lock:
            self._queries[key] = vector
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        out = np.empty((len(texts), self.dimension), np.float32)
        if not texts:
            return out
        model = self.model_name
        keys = [cache_key(model, t) for t in texts]
        found = self._lookup(keys)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            fresh = np.asarray(self.inner.embed_batch(list(missing.values())), np.float32)
            found.update(zip(missing.keys(), fresh, strict=True))
            self._remember([(k, model, v) for k, v in zip(missing.keys(), fresh, strict=True)])
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        try:
            cached = self._store.embedding_cache.get(list(dict.fromkeys(keys)))
        except DatabaseError:
            log.warning("embedding cache lookup failed; embedding without it", exc_info=True)
            return {}
        return {k: v for k, v in cached.items() if v.shape == (self.dimension,)}

    def _remember(self, rows: list[tuple[str, str, np.ndarray]]) -> None:
        try:
            self._store.embedding_cache.put(rows)
        except DatabaseError:
            log.warning("embedding cache write failed; vectors stay uncached", exc_info=True)
