"""Candidate generators: full-text, vector and graph signals, each a ranked list of item ids."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..embeddings.tier import VectorTier
from ..store import Store, fts_match_expression
from ..types import EDGE_MULTIPLIER, ItemKind
from .query import QueryAnalysis

log = logging.getLogger(__name__)

FTS_LIMIT = 30  # candidates per full-text signal (LoCoMo dev: 30 and 50 rank alike; 30 hydrates less)
VECTOR_LIMIT = 50  # candidates per vector signal
GRAPH_LIMIT = 50  # candidates from entity links
FTS_PREFIX_MIN = 0  # 0 = whole words only; porter stemming already folds most inflections (measured)
SECOND_HOP_DAMPING = 0.5


@dataclass(frozen=True)
class Signal:
    """One generator's output: (id, raw score) best first, all of one item kind."""

    name: str
    kind: ItemKind
    ranked: tuple[tuple[int, float], ...]
    note: str = ""


def fts_signals(store: Store, analysis: QueryAnalysis, scopes: Sequence[str], *,
                memories: bool = True, episodes: bool = True) -> list[Signal]:
    """bm25 over memories and episodes for the query's keywords (any keyword may match)."""
    match = fts_match_expression(analysis.search_text, prefix_min=FTS_PREFIX_MIN, operator="OR")
    if match is None:
        return []
    out = []
    if memories:
        out.append(Signal("fts_memory", ItemKind.MEMORY,
                          tuple(store.search.memories(match, scopes, FTS_LIMIT))))
    if episodes:
        out.append(Signal("fts_episode", ItemKind.EPISODE,
                          tuple(store.search.episodes(match, scopes, FTS_LIMIT))))
    return out


def vector_signals(vectors: VectorTier, query_vector: np.ndarray | None,
                   allowed: Mapping[ItemKind, Collection[int]], kinds: Sequence[ItemKind]) -> list[Signal]:
    """Cosine top-k per kind; an empty signal with a note when no model is ready."""
    names = {ItemKind.MEMORY: "vector_memory", ItemKind.EPISODE: "vector_episode"}
    if query_vector is None:
        return [Signal(names[k], k, (), note="vector index not ready") for k in kinds]
    return [Signal(names[k], k, tuple(vectors.search(k, query_vector, VECTOR_LIMIT, allowed.get(k))))
            for k in kinds]


def entity_signals(store: Store, analysis: QueryAnalysis, scopes: Sequence[str], *,
                   episodes: bool = True) -> list[Signal]:
    """Items linked to entities the query names, ranked by how many of those entities they mention."""
    if not analysis.entity_ids:
        return []
    ids = list(analysis.entity_ids)
    out = [Signal("graph_entity", ItemKind.MEMORY,
                  _count_links(store.graph.memories_for_entities(ids, scopes, GRAPH_LIMIT * 4)))]
    if episodes:
        out.append(Signal("graph_entity_episode", ItemKind.EPISODE,
                          _count_links(store.graph.episodes_for_entities(ids, scopes, GRAPH_LIMIT * 4))))
    return out


def subject_signal(store: Store, analysis: QueryAnalysis, scopes: Sequence[str]) -> list[Signal]:
    """Memories filling the profile slots a question about the user names: current ones first, then history."""
    if not analysis.subjects:
        return []
    ids = store.memories.by_subject(scopes, analysis.subjects, GRAPH_LIMIT)
    return [Signal("subject", ItemKind.MEMORY, tuple((i, 1.0 / rank) for rank, i in enumerate(ids, start=1)))]


def _count_links(pairs: Sequence[tuple[int, int]]) -> tuple[tuple[int, float], ...]:
    counts: dict[int, float] = {}
    for item_id, _ in pairs:  # pairs arrive newest first, so ties keep the newest first
        counts[item_id] = counts.get(item_id, 0.0) + 1.0
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    return tuple(ranked[:GRAPH_LIMIT])


def edge_signal(store: Store, seeds: Mapping[int, float], hops: int = 2) -> Signal:
    """Memories reached from seed memories along typed edges: seed score x edge multiplier x edge weight.

    A second hop is damped by SECOND_HOP_DAMPING. Seeds themselves are not re-proposed.
    """
    reached: dict[int, float] = {}
    frontier = dict(seeds)
    damping = 1.0
    for _ in range(max(0, hops)):
        if not frontier:
            break
        nxt: dict[int, float] = {}
        for edge in store.graph.edges_of(list(frontier)):
            for src, dst in ((edge.src_id, edge.dst_id), (edge.dst_id, edge.src_id)):
                if src in frontier and dst not in seeds:
                    value = frontier[src] * EDGE_MULTIPLIER[edge.relation] * edge.weight * damping
                    if value > nxt.get(dst, 0.0):
                        nxt[dst] = value
        frontier = {i: v for i, v in nxt.items() if i not in reached}
        for item_id, value in nxt.items():
            reached[item_id] = max(reached.get(item_id, 0.0), value)
        damping = SECOND_HOP_DAMPING
    ranked = sorted(reached.items(), key=lambda kv: -kv[1])[:GRAPH_LIMIT]
    return Signal("graph_edge", ItemKind.MEMORY, tuple(ranked))


class ScopeIdCache:
    """The ids of each kind visible to a set of scopes, grown incrementally (ids only ever increase).

    Deleted or forgotten items may linger here; hydration drops them, so this only narrows vector searches.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._cache: dict[tuple[ItemKind, tuple[str, ...]], tuple[int, frozenset[int]]] = {}

    def allowed(self, kind: ItemKind, scopes: Sequence[str]) -> frozenset[int]:
        """The same frozenset object until an id is added (the vector index caches its row numbers by identity)."""
        key = (kind, tuple(sorted(scopes)))
        with self._lock:
            last, ids = self._cache.get(key, (0, frozenset()))
            new = self._store.search.ids_after(kind, key[1], last)
            if new or key not in self._cache:
                ids = ids.union(new)
                self._cache[key] = (new[-1] if new else last, ids)
            return ids


class EntityNormCache:
    """`store.graph.entity_norms(scopes)`, reloaded only when an entity or alias was added since."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, ...], tuple[tuple[int, int], dict[str, int]]] = {}

    def norms(self, scopes: Sequence[str]) -> dict[str, int]:
        key = tuple(sorted(scopes))
        stamp = self._store.graph.entity_stamp()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        norms = self._store.graph.entity_norms(key)
        with self._lock:
            self._cache[key] = (stamp, norms)
        return norms
