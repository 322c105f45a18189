"""Second-stage rerank: the best fused candidates re-weighed by what each item itself says about the query."""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Mapping, Sequence

from ..config import RetrievalWeights
from ..store import Store
from ..types import ItemKind
from .fusion import Fused, Key, KeywordCoverage
from .tuning import IDF_REFRESH_GROWTH


class TermStats:
    """Inverse document frequencies of query words over episodes and memories, cached per word.

    Counting a word's documents costs one full-text lookup, so counts are kept until the corpus has grown by
    IDF_REFRESH_GROWTH (or shrunk), when frequencies may have moved enough to matter.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._size = 0
        self._counts: dict[str, int] = {}

    def idf(self, words: Collection[str]) -> dict[str, float]:
        """BM25's idf, log(1 + (N - n + 0.5) / (n + 0.5)), for each word (n = documents holding it)."""
        size = self._store.search.corpus_size()
        with self._lock:
            if size < self._size or size > self._size * (1 + IDF_REFRESH_GROWTH):
                self._counts, self._size = {}, size
            missing = [w for w in words if w not in self._counts]
        counts = self._store.search.term_document_counts(missing) if missing else {}
        with self._lock:
            self._counts.update(counts)
            known = {w: self._counts.get(w, 0) for w in words}
        return {w: math.log(1 + (size - n + 0.5) / (n + 0.5)) for w, n in known.items()}


def item_factor(
    text: str,
    cosine: float | None,
    coverage: float,
    is_memory: bool,
    weights: RetrievalWeights,
    *,
    fills_slot: bool = False,
) -> float:
    """How close an item comes to an ideal answer, in (0, 1]:

    exp(w_cos (cosine - 1) + w_cov (coverage - 1) + w_mem ([memory] - 1)) x ((1 + min(chars, cap)) / (1 + cap)) ^ w_sub

    Substance: a very short item ("ok, thanks!") rarely answers anything, while past the cap length says
    nothing more. A memory filling the profile slot the question names (`fills_slot`) is the answer however
    short it is, so it counts at the cap. A missing cosine (no model) counts as 0 for every item alike.
    """
    exponent = (
        weights.rerank_cosine * ((cosine or 0.0) - 1.0)
        + weights.rerank_coverage * (coverage - 1.0)
        + (0.0 if is_memory else -weights.rerank_memory)
    )
    cap = weights.substance_chars
    chars = cap if fills_slot else min(len(text), cap)
    return math.exp(exponent) * ((1.0 + chars) / (1.0 + cap)) ** weights.rerank_substance


def rerank(
    pool: Sequence[Fused],
    *,
    coverage_of: KeywordCoverage,
    texts: Mapping[Key, str],
    cosines: Mapping[Key, float],
    weights: RetrievalWeights,
    named: Mapping[Key, str],
) -> None:
    """Multiply each pooled entry's score by its `item_factor`, recording the features as signals.

    `named`: the query's words for an entity the item is linked to, which the item holds even when its text
    calls the entity otherwise (an alias: "husband" for Tomasz)."""
    for entry in pool:
        text = texts.get(entry.key, "")
        cosine = cosines.get(entry.key)
        # the question's words named this memory's profile slot
        fills_slot = "subject" in entry.signals
        coverage = coverage_of(f"{text} {named[entry.key]}" if entry.key in named else text)
        if fills_slot:
            coverage = max(coverage, weights.slot_coverage)
        factor = item_factor(
            text, cosine, coverage, entry.key[0] is ItemKind.MEMORY, weights, fills_slot=fills_slot
        )
        entry.score *= factor
        entry.signals["coverage"] = coverage
        entry.signals["rerank"] = factor
        if cosine is not None:
            entry.signals["cosine"] = cosine


def cross_rerank(candidates: Sequence[Fused], relevance: Sequence[float], weight: float) -> None:
    """Multiply each candidate's score by exp(weight x (p - p_best)), p the cross-encoder's relevance of it to
    the query in (0, 1): the candidate it rates best keeps its score, the others fall by how much less it rates
    them (weight 0: unchanged). Recorded as the signals "cross" (p) and "cross_factor"."""
    if not candidates:
        return
    best = max(relevance)
    for entry, p in zip(candidates, relevance, strict=True):
        factor = math.exp(weight * (p - best))
        entry.score *= factor
        entry.signals["cross"] = p
        entry.signals["cross_factor"] = factor
