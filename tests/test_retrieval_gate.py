"""The prefetch gate: baselines against the store, the relevance it gives, and its cached sample of the store."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from hermes_bowerbird.config import RetrievalWeights
from hermes_bowerbird.retrieval import gate, tuning

WEIGHTS = RetrievalWeights()


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_a_big_sample_outweighs_the_prior() -> None:
    sample = np.tile(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32), (5000, 1))
    base = gate.baseline(sample, np.array([1.0, 0.0], dtype=np.float32), 10_000)
    assert base is not None and (base.mean, base.std) == pytest.approx((0.5, 0.5), abs=0.01)


def test_a_tiny_sample_stays_near_the_prior() -> None:
    base = gate.baseline(np.array([[1.0, 0.0]], np.float32), np.array([1.0, 0.0], np.float32), 1)
    assert base is not None and base.mean == pytest.approx((1.0 + 16 * tuning.PRIOR_MEAN) / 17)


def test_no_baseline_from_an_empty_sample() -> None:
    assert gate.baseline(np.empty((0, 0), np.float32), np.ones(3, np.float32), 0) is None


def test_z_score_has_a_floor_under_the_spread() -> None:
    assert gate.Baseline(0.1, 0.0, 50).z(0.4) == pytest.approx(0.3 / tuning.MIN_STD)


@pytest.mark.parametrize(("small", "large"), [(10, 100), (100, 10_000), (1, 2)])
def test_chance_maximum_grows_with_the_store(small: int, large: int) -> None:
    assert gate.Baseline(0, 1, small).chance_max <= gate.Baseline(0, 1, large).chance_max


def test_chance_maximum_has_a_floor_for_tiny_stores() -> None:
    assert (
        gate.Baseline(0, 1, 2).chance_max == gate.Baseline(0, 1, tuning.MIN_CHANCE_SIZE).chance_max
    )


def test_chance_maximum_is_the_gaussian_extreme() -> None:
    assert gate.Baseline(0, 1, 1000).chance_max == pytest.approx(math.sqrt(2 * math.log(1000)))


def test_relevance_rises_with_the_cosine() -> None:
    base = gate.Baseline(0.1, 0.05, 200)
    assert gate.relevance(0.3, 0.0, base, WEIGHTS) < gate.relevance(0.5, 0.0, base, WEIGHTS)


def test_relevance_rises_with_keyword_coverage() -> None:
    base = gate.Baseline(0.1, 0.05, 200)
    assert gate.relevance(0.3, 0.0, base, WEIGHTS) < gate.relevance(0.3, 1.0, base, WEIGHTS)


def test_the_same_cosine_counts_for_less_in_a_query_close_to_everything() -> None:
    narrow, broad = gate.Baseline(0.05, 0.05, 200), gate.Baseline(0.30, 0.05, 200)
    assert gate.relevance(0.4, 0.0, broad, WEIGHTS) < gate.relevance(0.4, 0.0, narrow, WEIGHTS)


def test_the_same_cosine_counts_for_less_in_a_bigger_store() -> None:
    small, big = gate.Baseline(0.1, 0.05, 50), gate.Baseline(0.1, 0.05, 50_000)
    assert gate.relevance(0.35, 0.0, big, WEIGHTS) < gate.relevance(0.35, 0.0, small, WEIGHTS)


@pytest.mark.parametrize("coverage", [0.0, 0.5, 1.0])
def test_without_a_vector_coverage_alone_decides(coverage: float) -> None:
    expected = 1 / (1 + math.exp(-(WEIGHTS.gate_coverage * coverage + WEIGHTS.gate_keywords_bias)))
    assert gate.relevance(None, coverage, None, WEIGHTS) == pytest.approx(expected)


@pytest.mark.parametrize(("cosine", "coverage"), [(-1.0, 0.0), (1.0, 1.0), (0.0, 0.5)])
def test_relevance_stays_inside_zero_and_one(cosine: float, coverage: float) -> None:
    assert 0.0 < gate.relevance(cosine, coverage, gate.Baseline(0.0, 0.1, 100), WEIGHTS) < 1.0


class Fetcher:
    """Counts how often the store's vectors are read."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def __call__(self, ids: Sequence[int]) -> np.ndarray:
        self.calls.append(list(ids))
        return _unit(np.ones((len(ids), 4), np.float32)) if ids else np.empty((0, 0), np.float32)


def test_sample_is_bounded_and_spread_over_the_store() -> None:
    fetch = Fetcher()
    picked = gate.StoreSample(fetch).get(("user:a",), list(range(1000)))
    assert (
        picked.shape[0] == tuning.SAMPLE_SIZE
        and fetch.calls[0][0] == 0
        and fetch.calls[0][-1] == 999
    )


def test_sample_is_reused_while_the_store_grows_a_little() -> None:
    fetch = Fetcher()
    sample = gate.StoreSample(fetch)
    sample.get(("user:a",), list(range(100)))
    sample.get(("user:a",), list(range(105)))
    assert len(fetch.calls) == 1


def test_sample_is_redrawn_once_the_store_grew_enough() -> None:
    fetch = Fetcher()
    sample = gate.StoreSample(fetch)
    sample.get(("user:a",), list(range(100)))
    sample.get(("user:a",), list(range(120)))
    assert len(fetch.calls) == 2


def test_samples_are_kept_per_scope_set() -> None:
    fetch = Fetcher()
    sample = gate.StoreSample(fetch)
    sample.get(("user:a",), list(range(10)))
    sample.get(("user:b",), list(range(10)))
    assert len(fetch.calls) == 2


def test_the_plain_cosine_part_counts_when_weighted() -> None:
    base = gate.Baseline(0.1, 0.05, 200)
    weighted = RetrievalWeights(gate_cosine=10.0, gate_cosine_center=0.3)
    unweighted = RetrievalWeights(gate_cosine=0.0)
    assert gate.relevance(0.35, 0.0, base, weighted) > gate.relevance(0.35, 0.0, base, unweighted)


def test_the_plain_cosine_part_is_neutral_at_its_center() -> None:
    base = gate.Baseline(0.1, 0.05, 200)
    weighted = RetrievalWeights(gate_cosine=10.0, gate_cosine_center=0.3)
    assert gate.relevance(0.3, 0.0, base, weighted) == pytest.approx(
        gate.relevance(0.3, 0.0, base, RetrievalWeights(gate_cosine=0.0, gate_cosine_center=0.3))
    )


@pytest.mark.parametrize(
    ("question", "change"),
    [
        (None, 0.0),  # no stored question came near: the relevance as it was
        (WEIGHTS.gate_question_center - 0.1, 0.0),  # a question below the centre says nothing
        (WEIGHTS.gate_question_center + 0.2, WEIGHTS.gate_question * 0.2),
        (1.0, WEIGHTS.gate_question * (1.0 - WEIGHTS.gate_question_center)),
    ],
)
def test_a_close_stored_question_vouches_for_the_memory(
    question: float | None, change: float
) -> None:
    base = gate.Baseline(0.1, 0.1, 50)
    before = gate.relevance(0.3, 0.0, base, WEIGHTS)
    after = gate.relevance(0.3, 0.0, base, WEIGHTS, question)
    logit = math.log(after / (1 - after)) - math.log(before / (1 - before))
    assert logit == pytest.approx(change)


def test_a_matched_question_lifts_a_memory_the_statement_alone_would_not_pass() -> None:
    base = gate.Baseline(0.1, 0.1, 50)
    assert (
        gate.relevance(0.3, 0.0, base, WEIGHTS)
        < 0.5
        <= gate.relevance(0.3, 0.0, base, WEIGHTS, 0.98)
    )
