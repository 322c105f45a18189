"""Fusion arithmetic, neighbour and session lifts, supersession demotion, MMR and effective importance."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_bowerbird.config import RetrievalWeights, build_config
from hermes_bowerbird.errors import ConfigError
from hermes_bowerbird.retrieval.candidates import Signal
from hermes_bowerbird.retrieval.fusion import (
    Fused,
    KeywordCoverage,
    current_head,
    demote_stale_episodes,
    demote_superseded,
    keyword_evidence,
    make_similarity,
    mmr,
    rescore,
    session_prior,
    spread_to_neighbours,
    weighted_rrf,
)
from hermes_bowerbird.retrieval.query import QueryAnalysis
from hermes_bowerbird.retrieval.scoring import (
    access_boost,
    decay_exempt,
    decay_factor,
    effective_importance,
)
from hermes_bowerbird.types import Episode, ItemKind, Memory, MemoryType, Source

M, E = ItemKind.MEMORY, ItemKind.EPISODE
DAY = 86_400.0


def memory(memory_id: int, **kwargs: object) -> Memory:
    fields: dict[str, object] = {
        "id": memory_id,
        "scope": "user:a",
        "type": MemoryType.FACT,
        "content": f"memory {memory_id}",
        "importance": 0.6,
        "confidence": 1.0,
        "created_at": 0.0,
        "updated_at": 0.0,
        "source": Source.TOOL,
    }
    fields.update(kwargs)
    return Memory(**fields)  # type: ignore[arg-type]


def episode(episode_id: int, session: str, turn: int) -> Episode:
    return Episode(episode_id, "user:a", session, turn, 0, "user", f"turn {turn}", 0.0)


def test_weighted_rrf_arithmetic() -> None:
    signals = [Signal("a", M, ((1, 9.0), (2, 5.0))), Signal("b", M, ((2, 0.9), (3, 0.5)))]
    fused = weighted_rrf(signals, {"a": 1.0, "b": 0.5}, k=60)
    assert fused[(M, 1)].score == pytest.approx(1 / 61)
    assert fused[(M, 2)].score == pytest.approx(1 / 62 + 0.5 / 61)
    assert fused[(M, 3)].score == pytest.approx(0.5 / 62)
    assert fused[(M, 2)].signals == {"a": 5.0, "b": 0.9, "rrf": pytest.approx(1 / 62 + 0.5 / 61)}


def test_rrf_keeps_kinds_apart_and_ignores_unweighted_signals() -> None:
    signals = [
        Signal("a", M, ((1, 1.0),)),
        Signal("b", E, ((1, 1.0),)),
        Signal("c", M, ((1, 1.0),)),
    ]
    fused = weighted_rrf(signals, {"a": 1.0, "b": 1.0}, k=1)
    assert fused[(M, 1)].score == pytest.approx(0.5)
    assert fused[(E, 1)].score == pytest.approx(0.5)


def test_neighbours_pass_on_a_share_of_their_score() -> None:
    episodes = {
        1: episode(1, "s", 0),
        2: episode(2, "s", 1),
        3: episode(3, "s", 2),
        4: episode(4, "t", 1),
    }
    fused = {(E, i): Fused((E, i), score) for i, score in ((1, 1.0), (2, 0.0), (3, 0.0), (4, 0.0))}
    spread_to_neighbours(fused, episodes, prev_share=0.4, next_share=0.2)
    assert fused[(E, 2)].score == pytest.approx(0.4)  # follows the matching turn
    assert fused[(E, 3)].score == pytest.approx(0.0)  # two turns away
    assert fused[(E, 4)].score == pytest.approx(0.0)  # other session
    assert fused[(E, 1)].score == pytest.approx(1.0)  # its follower scored 0 before the spread


def test_session_prior_lifts_the_strongest_session() -> None:
    episodes = {1: episode(1, "s", 0), 2: episode(2, "s", 1), 3: episode(3, "t", 0)}
    fused = {(E, 1): Fused((E, 1), 1.0), (E, 2): Fused((E, 2), 1.0), (E, 3): Fused((E, 3), 1.0)}
    session_prior(fused, episodes, weight=0.5)
    assert fused[(E, 1)].score == pytest.approx(1.5)
    assert fused[(E, 3)].score == pytest.approx(1.25)


@pytest.mark.parametrize(
    ("role", "about_user", "expected"),
    [
        ("assistant", True, 0.5),  # the user's own words are the record about the user
        ("user", True, 1.0),
        ("assistant", False, 1.0),  # other questions weigh both sides alike
    ],
)
def test_assistant_turns_count_less_in_questions_about_the_user(
    role: str, about_user: bool, expected: float
) -> None:
    weights = replace(RetrievalWeights(), importance=0.0, assistant_about_user=0.5)
    entry = Fused((E, 1), 1.0)
    turn = Episode(1, "user:a", "s", 0, 0, role, "You live in Lisbon, right?", 0.0)
    rescore(
        entry,
        turn,
        QueryAnalysis("where do I live", ("live",), about_user=about_user),
        0.0,
        weights,
        0.5,
    )
    assert entry.score == pytest.approx(expected)


def test_superseded_memory_ranks_below_its_successor() -> None:
    old = memory(1, superseded_by=2, valid_until=10.0)
    new = memory(2)
    fused = {(M, 1): Fused((M, 1), 1.0), (M, 2): Fused((M, 2), 0.5)}
    demote_superseded(fused, {1: old, 2: new}, now=100.0, penalty=0.9)
    assert fused[(M, 1)].score < fused[(M, 2)].score
    assert fused[(M, 1)].signals["superseded"] == 1.0


def test_expired_memory_is_demoted_by_the_penalty() -> None:
    fused = {(M, 1): Fused((M, 1), 1.0)}
    demote_superseded(fused, {1: memory(1, valid_until=50.0)}, now=100.0, penalty=0.3)
    assert fused[(M, 1)].score == pytest.approx(0.3)


def test_mmr_removes_a_near_duplicate() -> None:
    texts = {
        (M, 1): "The user deploys with Ansible on Tuesdays",
        (M, 2): "The user deploys with Ansible on Tuesdays!",
        (M, 3): "The user prefers tabs over spaces",
    }
    ranked = [Fused((M, 1), 1.0), Fused((M, 2), 0.99), Fused((M, 3), 0.6)]
    picked = mmr(ranked, make_similarity({}, texts), lam=0.7, limit=2, duplicate=0.9)
    assert [e.key for e in picked] == [(M, 1), (M, 3)]


def test_mmr_with_lambda_one_keeps_score_order() -> None:
    texts = {(M, 1): "same words", (M, 2): "same words", (M, 3): "other"}
    ranked = [Fused((M, 1), 1.0), Fused((M, 2), 0.9), Fused((M, 3), 0.1)]
    assert [e.key for e in mmr(ranked, make_similarity({}, texts), lam=1.0, limit=3)] == [
        (M, 1),
        (M, 2),
        (M, 3),
    ]


def test_similarity_prefers_vectors_when_both_have_one() -> None:
    import numpy as np

    vectors = {(M, 1): np.array([1.0, 0.0], np.float32), (M, 2): np.array([0.0, 1.0], np.float32)}
    similarity = make_similarity(vectors, {(M, 1): "same", (M, 2): "same", (M, 3): "same"})
    assert similarity((M, 1), (M, 2)) == pytest.approx(0.0)
    assert similarity((M, 1), (M, 3)) == pytest.approx(1.0)  # falls back to words


EXEMPT = frozenset({MemoryType.IDENTITY, MemoryType.DECISION, MemoryType.PROCEDURE})


@pytest.mark.parametrize(
    ("kind", "days", "exempt", "expected"),
    [
        (MemoryType.FACT, 0, EXEMPT, 1.0),
        (MemoryType.FACT, 360, EXEMPT, 0.5),  # fact half-life: 2 x 180 days
        (MemoryType.EVENT, 90, EXEMPT, 0.5),  # event half-life: 0.5 x 180 days
        (MemoryType.IDENTITY, 10_000, EXEMPT, 1.0),  # exempt types never decay
        (MemoryType.DECISION, 10_000, EXEMPT, 1.0),
        (MemoryType.PROCEDURE, 10_000, EXEMPT, 1.0),
        (MemoryType.DECISION, 360, frozenset(), 0.5),  # not exempt: decision half-life 2 x 180 days
        (MemoryType.IDENTITY, 720, frozenset(), 0.5),  # not exempt: identity half-life 4 x 180 days
    ],
)
def test_decay_by_elapsed_time(
    kind: MemoryType, days: float, exempt: frozenset[MemoryType], expected: float
) -> None:
    assert decay_factor(memory(1, type=kind), days * DAY, 180.0, exempt) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ({}, EXEMPT),
        ({"decay_exempt_types": "identity"}, frozenset({MemoryType.IDENTITY})),
        (
            {"decay_exempt_types": ["identity", "goal"]},
            frozenset({MemoryType.IDENTITY, MemoryType.GOAL}),
        ),
        ({"decay_exempt_types": ""}, frozenset()),
    ],
)
def test_decay_exempt_types_come_from_config(
    tmp_path: Path, setting: dict[str, object], expected: frozenset[MemoryType]
) -> None:
    config = build_config(tmp_path, setting)
    assert decay_exempt(config) == expected
    old = memory(1, type=MemoryType.DECISION, created_at=0.0)
    kept = effective_importance(old, 3_650 * DAY, config)
    assert (kept == pytest.approx(old.importance)) is (MemoryType.DECISION in expected)


def test_unknown_exempt_type_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="decay_exempt_types"):
        build_config(tmp_path, {"decay_exempt_types": "identity,feelings"})


def test_access_restarts_decay_and_boosts(tmp_path: object) -> None:
    config = build_config(tmp_path, {})  # type: ignore[arg-type]
    stale = memory(1, created_at=0.0)
    used = replace(stale, accessed_at=360 * DAY, access_count=3)
    now = 360 * DAY
    assert effective_importance(stale, now, config) == pytest.approx(0.3)
    assert effective_importance(used, now, config) == pytest.approx(
        min(1.0, 0.6 * access_boost(3, 0.1))
    )
    assert access_boost(3, 0.1) == pytest.approx(1.2)
    assert access_boost(10**9, 0.1) == 2.0
    assert math.isclose(
        effective_importance(memory(2, importance=1.0, access_count=50), 0.0, config), 1.0
    )


def test_current_head_follows_the_supersession_chain() -> None:
    chain = {1: memory(1, superseded_by=2), 2: memory(2, superseded_by=3), 3: memory(3)}
    assert current_head(1, chain) == 3
    assert current_head(3, chain) == 3
    assert current_head(1, {1: memory(1, superseded_by=2)}) is None  # the successor is not loaded


def test_episodes_that_stated_a_superseded_fact_rank_below_its_successor() -> None:
    memories = {1: memory(1, superseded_by=2), 2: memory(2)}
    fused = {(E, 10): Fused((E, 10), 1.0), (E, 11): Fused((E, 11), 0.5), (M, 2): Fused((M, 2), 0.2)}
    demote_stale_episodes(fused, {10: [1]}, memories, penalty=0.5)
    # penalised to 0.5, then capped below #2
    assert fused[(E, 10)].score == pytest.approx(0.2 * 0.99)
    assert fused[(E, 10)].signals["superseded"] == 1.0
    assert fused[(E, 11)].score == 0.5  # an episode that stated nothing stale is untouched
    lone = {(E, 10): Fused((E, 10), 1.0)}
    demote_stale_episodes(lone, {10: [1]}, memories, penalty=0.5)
    # successor not among the candidates: the penalty alone
    assert lone[(E, 10)].score == pytest.approx(0.5)


EVIDENCE_TEXTS = {
    (M, 1): "lunch at noon",
    (M, 2): "the deploy script",
    (M, 3): None,
    (M, 4): "we deploy with ansible",
    (M, 5): "ansible deploy notes",
}


@pytest.mark.parametrize(
    ("ranked", "names", "top", "expected"),
    [
        ((1, 2), ("fts",), 3, 0.5),  # "deploy" of "ansible deploy"
        ((1, 2, 4), ("fts",), 3, 1.0),
        ((1, 2, 5, 4), ("fts",), 2, 0.5),  # the full match is past the first two
        ((3, 1, 4), ("fts",), 2, 1.0),  # an item the request may not see takes no place
        ((1, 4), ("other",), 3, 0.0),  # only the named signals count
        ((), ("fts",), 3, 0.0),
    ],
)
def test_keyword_evidence_is_the_best_coverage_among_the_first_items(
    ranked: tuple[int, ...], names: tuple[str, ...], top: int, expected: float
) -> None:
    signal = Signal("fts", M, tuple((i, 1.0) for i in ranked))
    coverage = KeywordCoverage(["ansible", "deploy"])
    assert keyword_evidence([signal], names, EVIDENCE_TEXTS.get, coverage, top) == pytest.approx(
        expected
    )
