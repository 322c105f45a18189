"""The optional cross-encoder reranker: off by default, its settings checked, a tiny CrossEncoder of the tests' own
run on the best candidates of a search within its time, skipped when it would not fit or runs too long, and a
broken model path costing the reranker only."""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_homes import KEYWORD_ONLY

from hermes_bowerbird.config import Config, RetrievalWeights, build_config, load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.errors import ConfigError
from hermes_bowerbird.options import RecallOptions
from hermes_bowerbird.retrieval import gate
from hermes_bowerbird.retrieval.cross_encoder import CrossEncoderReranker
from hermes_bowerbird.retrieval.fusion import Fused
from hermes_bowerbird.retrieval.rerank import cross_rerank
from hermes_bowerbird.types import ItemKind

FACTS = [
    "The user's cat is called Miso.",
    "The user works as a nurse in Leeds.",
    "The user is learning to play the cello.",
    "The user plays the guitar on Friday evenings.",
    "The user's favourite food is ramen.",
]


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({}, None),
        ({"reranker_model": "/models/ce", "reranker_candidates": "30"}, None),
        ({"reranker_candidates": 0}, "reranker_candidates"),
        ({"reranker_candidates": 101}, "reranker_candidates"),
        ({"reranker_weight": -1}, "reranker_weight"),
        ({"reranker_weight": "nan"}, "reranker_weight"),
        ({"reranker_gate_weight": "inf"}, "reranker_gate_weight"),
        ({"reranker_candidates": "many"}, "reranker_candidates"),
    ],
)
def test_reranker_settings_are_checked(
    tmp_path: Path, values: dict[str, Any], error: str | None
) -> None:
    if error is None:
        config = build_config(tmp_path, values)
        assert config.reranker_model == values.get("reranker_model", "")
        return
    with pytest.raises(ConfigError, match=error):
        build_config(tmp_path, values)


def test_the_reranker_is_off_by_default(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ=KEYWORD_ONLY)
    assert config.reranker_model == ""
    engine = Bowerbird(config, background=False)
    try:
        assert engine.reranker is None and engine.retriever.reranker is None
        assert engine.status()["reranker"] is None
    finally:
        engine.shutdown()


def entries(scores: list[float]) -> list[Fused]:
    return [Fused((ItemKind.MEMORY, i + 1), s, {}) for i, s in enumerate(scores)]


@pytest.mark.parametrize(
    ("weight", "relevance", "expected"),
    [
        (0.0, [0.9, 0.1, 0.5], [1.0, 0.8, 0.6]),
        (2.0, [0.9, 0.1, 0.5], [1.0, 0.8 * math.exp(-1.6), 0.6 * math.exp(-0.8)]),
        (2.0, [0.2, 0.7, 0.7], [math.exp(-1.0), 0.8, 0.6]),
    ],
)
def test_the_cross_encoder_keeps_its_best_and_lowers_the_rest(
    weight: float, relevance: list[float], expected: list[float]
) -> None:
    pool = entries([1.0, 0.8, 0.6])
    cross_rerank(pool, relevance, weight)
    assert [e.score for e in pool] == pytest.approx(expected)
    assert [e.signals["cross"] for e in pool] == relevance


@pytest.mark.parametrize(
    ("cross", "shift"),
    [(None, 0.0), ((0.5, 3.0), 0.0), ((0.9, 2.0), 0.8), ((0.1, 2.0), -0.8)],
)
def test_the_gate_adds_the_cross_encoders_weighed_relevance(
    cross: tuple[float, float] | None, shift: float
) -> None:
    weights = RetrievalWeights()
    plain = gate.relevance(None, 0.5, None, weights)
    logit = math.log(plain / (1 - plain))
    value = gate.relevance(None, 0.5, None, weights, cross=cross)
    assert math.log(value / (1 - value)) == pytest.approx(logit + shift)


def reranker_config(tmp_path: Path, model: str, **values: Any) -> Config:
    return load_config(
        tmp_path, environ={**KEYWORD_ONLY}, overrides={"reranker_model": model, **values}
    )


@contextlib.contextmanager
def remembering(config: Config) -> Iterator[Bowerbird]:
    """An engine holding FACTS in scope "u", once its reranker (if any) has loaded."""
    engine = Bowerbird(config, background=False)
    try:
        for fact in FACTS:
            engine.remember(fact, scope="u")
        engine.admin.load_model()
        assert engine.admin.wait_reranker(60)
        yield engine
    finally:
        engine.shutdown()


@pytest.fixture
def reranked(tmp_path: Path, tiny_cross_encoder: Path) -> Iterator[Bowerbird]:
    with remembering(reranker_config(tmp_path, str(tiny_cross_encoder))) as engine:
        yield engine


def cross_of(engine: Bowerbird, query: str, **options: Any) -> tuple[list[str], list[float | None]]:
    hits = engine.recall(query, scopes=("u",), options=RecallOptions(explain=True, **options))
    return [h.content for h in hits], [h.signals.get("cross") for h in hits]


def test_a_tiny_cross_encoder_reads_the_best_candidates(reranked: Bowerbird) -> None:
    texts, cross = cross_of(reranked, "does the user play the cello or the guitar?")
    assert set(texts[:2]) == {FACTS[2], FACTS[3]}
    assert cross and all(p is not None and 0.0 < p < 1.0 for p in cross)
    status = reranked.status()["reranker"]
    assert isinstance(status, dict)
    assert status["state"] == "ready" and status["runs"] == 1
    assert status["ms_per_candidate"] is not None and status["ms_per_candidate"] > 0


def test_with_no_weight_the_cross_encoder_changes_no_order(
    tmp_path: Path, tiny_cross_encoder: Path
) -> None:
    orders = []
    for model, folder in (("", "plain"), (str(tiny_cross_encoder), "reranked")):
        config = reranker_config(tmp_path / folder, model, reranker_weight=0.0)
        with remembering(config) as engine:
            orders.append(cross_of(engine, "what does the user play?"))
    (plain, plain_cross), (reranked, cross) = orders
    assert plain == reranked
    assert set(plain_cross) == {None} and None not in cross


def test_a_reranker_that_would_not_fit_is_skipped(tmp_path: Path, tiny_cross_encoder: Path) -> None:
    config = reranker_config(tmp_path, str(tiny_cross_encoder), prefetch_timeout_seconds=0.0)
    with remembering(config) as engine:
        started = time.monotonic()
        texts, cross = cross_of(engine, "what does the user play?")
        assert texts and set(cross) == {None}
        assert time.monotonic() - started < 5.0
        status = engine.status()["reranker"]
        assert isinstance(status, dict)
        assert (status["runs"], status["skipped_no_time"]) == (0, 1)


class StoppedClock:
    """A clock that hardly moves: the warm-up seems to cost nothing, so every run is expected to fit."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1e-9
        return self.now


def test_a_run_that_outlasts_the_time_left_is_not_waited_for(tmp_path: Path) -> None:
    from tiny_models import write_tiny_cross_encoder

    slow = write_tiny_cross_encoder(tmp_path / "slow-ce", layers=4, width=256)
    clock = StoppedClock()
    reranker = CrossEncoderReranker(str(slow), candidates=20, clock=clock)
    try:
        reranker.start()
        assert reranker.wait_ready(60)
        texts = [" ".join(FACTS * 6)] * 20
        started = time.monotonic()
        assert reranker.score("what does the user play?", texts, clock.now + 0.002) is None
        assert time.monotonic() - started < 0.5  # not waited for
        # the run goes on on its own thread: a search meanwhile finds the reranker busy
        assert reranker.score("what does the user play?", texts[:1], clock.now + 60.0) is None
        status = reranker.status()
        assert (status["skipped_slow"], status["skipped_no_time"], status["runs"]) == (1, 1, 0)
    finally:
        reranker.close()


@pytest.mark.parametrize("where", ["missing", "not-a-model"])
def test_a_broken_reranker_costs_the_reranker_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    model = tmp_path / where
    if where == "not-a-model":
        model.mkdir()
        (model / "config.json").write_text("{not json", encoding="utf-8")
    engine = Bowerbird(reranker_config(tmp_path, str(model)), background=False)
    try:
        engine.remember(FACTS[2], scope="u")
        with caplog.at_level(logging.ERROR, logger="hermes_bowerbird"):
            engine.admin.load_model()
            assert not engine.admin.wait_reranker(60)
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and str(model) in errors[0]
        status = engine.status()["reranker"]
        assert isinstance(status, dict) and status["state"] == "unavailable"
        texts, cross = cross_of(engine, "cello")
        assert texts == [FACTS[2]] and cross == [None]
    finally:
        engine.shutdown()


def test_the_reranker_runs_on_the_configured_threads(tiny_cross_encoder: Path) -> None:
    import torch

    before = torch.get_num_threads()
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), candidates=4, threads=1)
    try:
        reranker.start()
        assert reranker.wait_ready(60)
        # torch's count is per thread: the reranker's own thread runs on one, the caller's is untouched
        assert reranker._pool.submit(torch.get_num_threads).result() == 1
        assert torch.get_num_threads() == before
        scores = reranker.score("cello?", FACTS[:4], time.monotonic() + 60)
        assert scores is not None and len(scores) == 4
    finally:
        reranker.close()
        torch.set_num_threads(before)
