"""Second-stage rerank: term statistics, idf-weighted keyword coverage, the item factor and its effect on order."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from hermes_bowerbird.config import RetrievalWeights
from hermes_bowerbird.retrieval.fusion import Fused, KeywordCoverage
from hermes_bowerbird.retrieval.rerank import TermStats, item_factor, rerank
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewEpisode, NewMemory, Source

M, E = ItemKind.MEMORY, ItemKind.EPISODE
WEIGHTS = RetrievalWeights()


def _episode(store: Store, turn: int, text: str) -> int:
    return store.episodes.insert(
        NewEpisode(
            scope="user:a",
            session_id="s",
            turn_index=turn,
            chunk_index=0,
            role="user",
            content=text,
        )
    )


def test_term_counts_cover_episodes_and_memories_and_stem_like_search(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    _episode(store, 0, "We painted the fence")
    _episode(store, 1, "Painting is relaxing")
    store.insert_memory(
        NewMemory(
            scope="user:b", type=MemoryType.FACT, content="Paints every Sunday", source=Source.TOOL
        )
    )
    counts = store.search.term_document_counts(["paint", "fence", "zebra", '"; DROP'])
    assert counts["paint"] == 3  # porter stemming: painted, painting, paints
    assert counts["fence"] == 1
    assert counts["zebra"] == 0
    assert store.search.term_document_counts(["paint"], cap=1) == {
        "paint": 2
    }  # one per table at most
    assert store.search.corpus_size() == 3
    store.close()


def test_term_stats_weigh_rare_words_higher_and_refresh_after_growth(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    for turn in range(20):
        _episode(store, turn, f"coffee talk number {turn}" + (" lisbon" if turn == 0 else ""))
    stats = TermStats(store)
    idf = stats.idf({"coffee", "lisbon", "unknown"})
    assert idf["unknown"] > idf["lisbon"] > idf["coffee"] > 0
    for turn in range(20, 30):  # grows the corpus by half: counts are taken again
        _episode(store, turn, "lisbon again")
    assert stats.idf({"lisbon"})["lisbon"] == pytest.approx(math.log(1 + (30 - 11 + 0.5) / 11.5))
    store.close()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The painting of Lisbon", 1.0),
        ("I painted it", 0.75),  # painted/painting share their first five letters
        ("lisbon", 0.25),
        ("LISBON, PAINTS!", 1.0),
        ("a pain in the neck", 0.0),  # 'pain' is not a word starting with 'paint'
        ("", 0.0),
    ],
)
def test_keyword_coverage_weighs_words_by_idf(text: str, expected: float) -> None:
    coverage = KeywordCoverage(["painting", "lisbon"], {"painting": 3.0, "lisbon": 1.0})
    assert coverage(text) == pytest.approx(expected)


def test_keyword_coverage_without_idf_counts_every_keyword_alike() -> None:
    coverage = KeywordCoverage(["painting", "lisbon", "paints"])  # painting and paints are one stem
    assert coverage("I painted it") == pytest.approx(0.5)
    assert coverage("Lisbon, painted") == 1.0


def test_keyword_coverage_of_short_keywords_needs_the_whole_word() -> None:
    coverage = KeywordCoverage(["tim", "art"], {"tim": 1.0, "art": 1.0})
    assert coverage("Timbuktu artists") == 0.0
    assert coverage("Tim: art") == 1.0
    assert KeywordCoverage([], {})("anything") == 0.0


def test_item_factor_substance_is_capped_and_slot_fillers_count_at_the_cap() -> None:
    weights = replace(
        WEIGHTS, rerank_cosine=0.0, rerank_coverage=0.0, rerank_memory=0.0, substance_chars=100.0
    )
    short, long, longer = (item_factor("x" * n, 1.0, 1.0, True, weights) for n in (10, 100, 1000))
    assert short == pytest.approx(11 / 101) and long == pytest.approx(1.0)
    assert longer == long
    assert item_factor("x" * 10, 1.0, 1.0, True, weights, fills_slot=True) == pytest.approx(1.0)


def test_item_factor_is_at_most_one() -> None:
    assert item_factor("x" * 1000, 1.0, 1.0, True, WEIGHTS) == pytest.approx(1.0)
    assert (
        0
        < item_factor("", -1.0, 0.0, False, WEIGHTS)
        < item_factor("x" * 50, 0.2, 0.5, False, WEIGHTS)
        < 1
    )


def test_item_factor_rewards_cosine_coverage_and_memories() -> None:
    base = item_factor("same text", 0.0, 0.0, False, WEIGHTS)
    assert item_factor("same text", 0.5, 0.0, False, WEIGHTS) == pytest.approx(
        base * math.exp(WEIGHTS.rerank_cosine * 0.5)
    )
    assert item_factor("same text", 0.0, 1.0, False, WEIGHTS) == pytest.approx(
        base * math.exp(WEIGHTS.rerank_coverage)
    )
    assert item_factor("same text", 0.0, 0.0, True, WEIGHTS) == pytest.approx(
        base * math.exp(WEIGHTS.rerank_memory)
    )
    assert item_factor("same text", None, 0.0, False, WEIGHTS) == base


def test_rerank_lifts_the_substantive_answer_over_chit_chat() -> None:
    chit_chat = Fused((E, 1), 1.0)
    answer = Fused((E, 2), 0.8)
    slot = Fused((M, 3), 0.5, {"subject": 1.0})
    texts = {
        (E, 1): "Tim: You rock!",
        (
            E,
            2,
        ): "Tim: I went to a castle in the UK last Friday and the architecture was unbelievable.",
        (M, 3): "Lives in Leeds.",
    }
    coverage = KeywordCoverage(["visit", "castle"], {"visit": 1.0, "castle": 2.0})
    rerank(
        [chit_chat, answer, slot],
        coverage_of=coverage,
        texts=texts,
        cosines={(E, 2): 0.4},
        weights=WEIGHTS,
        named={},
    )
    assert answer.score > chit_chat.score
    assert answer.signals["coverage"] == pytest.approx(2 / 3) and answer.signals["cosine"] == 0.4
    assert slot.signals["coverage"] == 1.0  # a slot filler answers the question it was found for
    assert "cosine" not in chit_chat.signals
