"""Candidate generators: full-text, vector and graph searches, each a ranked list of (item id, raw score)."""

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
from .tuning import (
    EDGE_HOPS,
    FTS_LIMIT,
    FTS_PREFIX_MIN,
    GRAPH_LIMIT,
    GRAPH_LINK_ROWS,
    KEYWORDS_BY_SCOPE_FROM_ITEMS,
    QUESTION_LIMIT,
    SECOND_HOP_DAMPING,
    VECTOR_LIMIT,
)

log = logging.getLogger(__name__)

Ranked = tuple[tuple[int, float], ...]


@dataclass(frozen=True)
class Signal:
    """One generator's output: (id, raw score) best first, all of one item kind."""

    name: str
    kind: ItemKind
    ranked: Ranked
    note: str = ""


def full_text(
    store: Store, analysis: QueryAnalysis, scopes: Sequence[str], kind: ItemKind, seen: int = 0
) -> Ranked:
    """bm25 over memories or episodes for the query's keywords (any keyword may match); `seen`: how many items of
    the kind the scopes hold (from KEYWORDS_BY_SCOPE_FROM_ITEMS on, each scope is ranked side by side)."""
    match = fts_match_expression(analysis.search_text, prefix_min=FTS_PREFIX_MIN, operator="OR")
    if match is None:
        return ()
    by_scope = seen >= KEYWORDS_BY_SCOPE_FROM_ITEMS
    if kind is ItemKind.MEMORY:
        return tuple(store.search.memories(match, scopes, FTS_LIMIT, by_scope=by_scope))
    return tuple(store.search.episodes(match, scopes, FTS_LIMIT, by_scope=by_scope))


def nearest(
    vectors: VectorTier,
    query_vector: np.ndarray,
    kind: ItemKind,
    allowed: Collection[int],
    scopes: Sequence[str],
) -> Ranked:
    """Cosine top-k of one kind among the allowed ids (the items of `scopes`)."""
    return tuple(vectors.search(kind, query_vector, VECTOR_LIMIT, allowed, scopes))


def asked_questions(
    store: Store,
    vectors: VectorTier,
    query_vector: np.ndarray,
    allowed: Collection[int],
    scopes: Sequence[str],
    floor: float = 0.0,
) -> Ranked:
    """Memories whose stored questions (store/questions.py) come closest to the query: question matched to question,
    each memory at the cosine of its best question, if that reaches `floor` (a question no nearer than two unrelated
    questions of the same shape, "what is my ...?", says nothing)."""
    hits = [
        (question_id, score)
        for question_id, score in vectors.search(
            ItemKind.QUESTION, query_vector, QUESTION_LIMIT, allowed, scopes
        )
        if score >= floor
    ]
    owners = store.questions.memories_of([question_id for question_id, _ in hits])
    best: dict[int, float] = {}
    for question_id, score in hits:
        memory_id = owners.get(question_id)
        if memory_id is not None and score > best.get(memory_id, -2.0):
            best[memory_id] = score
    return tuple(sorted(best.items(), key=lambda kv: -kv[1])[:VECTOR_LIMIT])


def entity_links(
    store: Store, analysis: QueryAnalysis, scopes: Sequence[str], kind: ItemKind
) -> Ranked:
    """Items linked to entities the query names, ranked by how many of those entities they mention."""
    if not analysis.entity_ids:
        return ()
    ids = list(analysis.entity_ids)
    if kind is ItemKind.MEMORY:
        return _count_links(
            store.graph.memories_for_entities(ids, scopes, GRAPH_LIMIT * GRAPH_LINK_ROWS)
        )
    return _count_links(
        store.graph.episodes_for_entities(ids, scopes, GRAPH_LIMIT * GRAPH_LINK_ROWS)
    )


def subject_slots(store: Store, analysis: QueryAnalysis, scopes: Sequence[str]) -> Ranked:
    """Memories filling the profile slots a question about the user names: current ones first, then history."""
    if not analysis.subjects:
        return ()
    ids = store.memories.by_subject(scopes, analysis.subjects, GRAPH_LIMIT)
    return tuple((i, 1.0 / rank) for rank, i in enumerate(ids, start=1))


def _count_links(pairs: Sequence[tuple[int, int]]) -> Ranked:
    counts: dict[int, float] = {}
    for item_id, _ in pairs:  # pairs arrive newest first, so ties keep the newest first
        counts[item_id] = counts.get(item_id, 0.0) + 1.0
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    return tuple(ranked[:GRAPH_LIMIT])


def typed_edges(store: Store, seeds: Mapping[int, float], hops: int = EDGE_HOPS) -> Ranked:
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
    return tuple(sorted(reached.items(), key=lambda kv: -kv[1])[:GRAPH_LIMIT])


class ScopeIdCache:
    """The ids of each kind visible to a set of scopes, grown incrementally (ids only ever increase).

    Deleted or forgotten items may linger here; hydration drops them, so this only narrows vector searches.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._cache: dict[tuple[ItemKind, tuple[str, ...]], tuple[int, frozenset[int]]] = {}

    def known(self, kind: ItemKind, scopes: Sequence[str]) -> int:
        """How many ids of this kind the scopes held when last read (0 if never), without reading them."""
        with self._lock:
            return len(self._cache.get((kind, tuple(sorted(scopes))), (0, frozenset()))[1])

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


class SubjectKeyCache:
    """The distinct subject keys of live memories in a set of scopes, read again only when a memory was added.

    The ids visible to the scopes (`ScopeIdCache.allowed`) are the same object until an id is added; a memory
    forgotten since may leave its key here a while, which only lets a question's slot name a key with no memory."""

    def __init__(self, store: Store, ids: ScopeIdCache) -> None:
        self._store = store
        self._ids = ids
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, ...], tuple[frozenset[int], frozenset[str]]] = {}

    def keys(self, scopes: Sequence[str], allowed: frozenset[int] | None = None) -> frozenset[str]:
        """`allowed`: the scopes' memory ids as the caller has just read them (`ScopeIdCache.allowed`), not read
        again here."""
        key = tuple(sorted(scopes))
        if allowed is None:
            allowed = self._ids.allowed(ItemKind.MEMORY, key)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] is allowed:
                return cached[1]
        subjects = frozenset(self._store.memories.subject_keys(key))
        with self._lock:
            self._cache[key] = (allowed, subjects)
        return subjects


class EntityNormCache:
    """`store.graph.names_and_roles(scopes)`, reloaded only when an entity or alias was added, changed or deleted."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, ...], tuple[int, dict[str, int], dict[str, str]]] = {}

    def norms(self, scopes: Sequence[str]) -> dict[str, int]:
        return self.load(scopes)[0]

    def alias_names(self, scopes: Sequence[str]) -> dict[str, str]:
        return self.load(scopes)[1]

    def load(self, scopes: Sequence[str]) -> tuple[dict[str, int], dict[str, str]]:
        """(norms, alias names) under one look at the entities' stamp."""
        key = tuple(sorted(scopes))
        stamp = self._store.graph.entity_stamp()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == stamp:
                return cached[1], cached[2]
        norms, aliases = self._store.graph.names_and_roles(key)
        with self._lock:
            self._cache[key] = (stamp, norms, aliases)
        return norms, aliases
