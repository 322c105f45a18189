"""Prefetch gate: whether a recalled item is worth injecting unasked, judged against this store and this query.

An absolute cosine floor means different things for different queries and stores: a generic question is a little
similar to everything, and a big store holds, by chance alone, some item that looks close. So an item's cosine is
read against the query's similarity to a sample of the store (a z-score), in units of what the best of `size`
unrelated items reaches by chance (about sqrt(2 ln size) standard deviations), together with the idf-weighted
share of the query's keywords the item holds. Items whose relevance reaches the operating point (config
`prefetch_gate`) pass.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from ..config import RetrievalWeights
from .tuning import (
    MIN_CHANCE_SIZE,
    MIN_STD,
    PRIOR_MEAN,
    PRIOR_STD,
    PRIOR_WEIGHT,
    SAMPLE_REFRESH_GROWTH,
    SAMPLE_SIZE,
)


@dataclass(frozen=True)
class Baseline:
    """The query's similarity to the store at large: mean and spread over a sample, and the store's size."""

    mean: float
    std: float
    size: int

    def z(self, cosine: float) -> float:
        return (cosine - self.mean) / max(self.std, MIN_STD)

    @property
    def chance_max(self) -> float:
        """The z-score the best of `size` unrelated items reaches by chance (Gaussian extreme, ~sqrt(2 ln n))."""
        return math.sqrt(2.0 * math.log(max(self.size, MIN_CHANCE_SIZE)))


def baseline(sample: np.ndarray, query: np.ndarray, size: int) -> Baseline | None:
    """The query's baseline against a sample of stored unit vectors, pooled with the prior (None when empty)."""
    if sample.ndim != 2 or sample.shape[0] == 0:
        return None
    scores = sample @ np.asarray(query, dtype=np.float32)
    n, m, v = float(len(scores)), float(scores.mean()), float(scores.var())
    mean = (n * m + PRIOR_WEIGHT * PRIOR_MEAN) / (n + PRIOR_WEIGHT)
    var = (n * (v + (m - mean) ** 2) + PRIOR_WEIGHT * (PRIOR_STD**2 + (PRIOR_MEAN - mean) ** 2)) / (
        n + PRIOR_WEIGHT
    )
    return Baseline(mean, math.sqrt(var), size)


def relevance(
    cosine: float | None,
    coverage: float,
    base: Baseline | None,
    weights: RetrievalWeights,
    question: float | None = None,
    cross: tuple[float, float] | None = None,
) -> float:
    """How plainly an item answers the query, in (0, 1): the logistic of

    w_z x (z(cosine) / chance_max - w_chance) + w_cosine x (cosine - cosine_center) + w_cov x coverage
      + w_question x max(0, question - question_center)

    where coverage is the idf-weighted share of the query's keywords the item holds. The z-score says how far the
    item stands out of this store for this query; the plain cosine says how close it is in absolute terms, which
    matters in a small store where a question about anything stands out a little. `question` is the cosine of the
    query to the closest of the questions stored with a memory: a question and the statement answering it sit far
    apart for a sentence model, two wordings of one question close, so a near question vouches for the memory.
    `cross`: the cross-encoder's relevance p of the item and the weight w it has (config `reranker_gate_weight`),
    adding w x (p - 0.5). Without a vector (no model, or a store too small for a baseline) coverage alone decides,
    with a bias of its own.
    """
    if cosine is None or base is None:
        value = weights.gate_coverage * coverage + weights.gate_keywords_bias
    else:
        value = (
            weights.gate_z * (base.z(cosine) / base.chance_max - weights.gate_chance)
            + weights.gate_cosine * (cosine - weights.gate_cosine_center)
            + weights.gate_coverage * coverage
        )
    if question is not None:
        value += weights.gate_question * max(0.0, question - weights.gate_question_center)
    if cross is not None:
        value += cross[1] * (cross[0] - 0.5)
    return 1.0 / (1.0 + math.exp(-value))


ItemId = TypeVar("ItemId")


class StoreSample(Generic[ItemId]):
    """A fixed, evenly spaced sample of the vectors visible to a set of scopes, redrawn as the store grows."""

    def __init__(self, fetch: Callable[[Sequence[ItemId]], np.ndarray]) -> None:
        self._fetch = fetch
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, ...], tuple[int, np.ndarray]] = {}

    def get(self, key: tuple[str, ...], ids: Sequence[ItemId]) -> np.ndarray:
        """The sample for these scopes, given all ids they hold (sorted); reused until they grew enough."""
        size = len(ids)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and cached[0] <= size <= cached[0] * (1 + SAMPLE_REFRESH_GROWTH):
            return cached[1]
        picks = (
            [ids[int(i)] for i in np.linspace(0, size - 1, min(size, SAMPLE_SIZE))] if size else []
        )
        matrix = self._fetch(picks)
        with self._lock:
            self._cache[key] = (size, matrix)
        return matrix
