"""Nearest neighbours for maintenance: a batch of memories against every live memory of their scope at once."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..embeddings.tier import VectorTier
from ..store import Store
from ..types import ItemKind, Memory

_BLOCK = 8_192  # scope rows multiplied at a time: bounds the work matrices to a few tens of MB


class ScopeNeighbours:
    """Thresholded top-k neighbours within one scope for many query vectors: one blocked matrix product per
    scope instead of a full index scan per query, so a batch of new memories costs about one pass."""

    def __init__(self, store: Store, vectors: VectorTier) -> None:
        self._store = store
        self._vectors = vectors

    def search(
        self, scope: str, queries: Mapping[int, np.ndarray], *, k: int, threshold: float
    ) -> dict[int, list[tuple[int, float]]]:
        """For each query id: (memory id, cosine) of live memories of `scope` at or above `threshold`, best
        first, the query itself excluded."""
        found: dict[int, list[tuple[int, float]]] = {q: [] for q in queries}
        if not queries:
            return found
        query_ids = list(queries)
        matrix = np.stack([queries[q] for q in query_ids]).astype(np.float32, copy=False)
        scope_ids = sorted(self._store.memories.live_ids([scope]))
        for start in range(0, len(scope_ids), _BLOCK):
            block = self._vectors.vectors(ItemKind.MEMORY, scope_ids[start : start + _BLOCK])
            if not block:
                continue
            ids = np.fromiter(block, np.int64, len(block))
            scores = matrix @ np.stack(list(block.values())).T
            rows, cols = np.nonzero(scores >= threshold)
            for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
                other = int(ids[col])
                if other != query_ids[row]:
                    found[query_ids[row]].append((other, float(scores[row, col])))
        return {q: sorted(hits, key=lambda h: (-h[1], h[0]))[:k] for q, hits in found.items()}

    def search_each(
        self,
        memories: Iterable[Memory],
        vecs: Mapping[int, np.ndarray],
        *,
        k: int,
        threshold: float,
    ) -> dict[int, list[tuple[int, float]]]:
        """`search` for each memory (by its vector in `vecs`) within its own scope, one pass per scope."""
        groups: dict[str, dict[int, np.ndarray]] = {}
        for memory in memories:
            groups.setdefault(memory.scope, {})[memory.id] = vecs[memory.id]
        hits: dict[int, list[tuple[int, float]]] = {}
        for scope, queries in groups.items():
            hits.update(self.search(scope, queries, k=k, threshold=threshold))
        return hits


def vectors_for(
    vectors: VectorTier, memories: Sequence[Memory], *, embed_missing: bool
) -> dict[int, np.ndarray]:
    """Stored vectors of these memories; those without one are embedded first when `embed_missing`."""
    found = vectors.vectors(ItemKind.MEMORY, [m.id for m in memories])
    missing = [(m.id, m.content) for m in memories if m.id not in found]
    if missing and embed_missing and vectors.add(ItemKind.MEMORY, missing):
        found.update(vectors.vectors(ItemKind.MEMORY, [i for i, _ in missing]))
    return found


def same_scope(
    memories: Mapping[int, Memory], hits: Iterable[tuple[int, float]], scope: str
) -> list[tuple[Memory, float]]:
    """Hits whose memory is live and in `scope` (a guard against rows that changed since the search)."""
    out = []
    for memory_id, score in hits:
        memory = memories.get(memory_id)
        if memory is not None and memory.scope == scope and not memory.forgotten:
            out.append((memory, score))
    return out
