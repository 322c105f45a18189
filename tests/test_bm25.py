"""bm25.py against SQLite's bm25(): same rows, same order, same scores, over many queries."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from fts_oracle import (
    Fts5Table,
    dev_texts,
    match_expressions,
    memory_rows,
    synthetic_questions,
    synthetic_texts,
)

from hermes_bowerbird.store.bm25 import (
    EPISODE_WEIGHTS,
    IDF_FLOOR,
    MEMORY_WEIGHTS,
    Corpus,
    idf,
    phrase_hits,
    score,
)
from hermes_bowerbird.store.lexemes import Phrase, parse_match, tokens

# Hand-written expressions: multi-token phrases, prefixes of them, overlapping repeats, a phrase of no token,
# the same stem twice, a word no row holds
_HAND = [
    '"new_job"',
    '"new_jo"*',
    '"e-mail" OR "sourdough"',
    '"the" OR "the"',
    '"running" OR "runs"',
    '"_" OR "kyoto"',
    '"_" AND "kyoto"',
    '"zebra"',
    '"caroline" AND "melanie"',
    '"ca"* OR "mel"*',
    '"in_the"',
    '"a_pottery_class"',
    '"sao_paulo" OR "são"',
]


def _texts() -> list[str]:
    texts = synthetic_texts(1_200)
    persona = dev_texts("persona")
    return texts + (persona[:800] if persona else [])


def _questions() -> list[str]:
    questions = synthetic_questions(40)
    locomo = dev_texts("locomo")
    return questions + ([q for q in locomo if q.endswith("?")][:40] if locomo else [])


@pytest.fixture(scope="module")
def expressions() -> list[str]:
    return match_expressions(_questions()) + _HAND


def _assert_same_ranking(
    theirs: Sequence[tuple[int, float]], ours: Sequence[tuple[int, float]], match: str
) -> None:
    assert [i for i, _ in ours] == [i for i, _ in theirs], match
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        assert a == pytest.approx(b, rel=0, abs=1e-9), match


def test_memories_rank_as_sqlite_ranks(expressions: list[str]) -> None:
    rows = memory_rows(_texts())
    table = Fts5Table(("content", "summary", "tags"))
    table.add(rows)
    corpus = Corpus(MEMORY_WEIGHTS)
    corpus.add((i, [tokens(text) for text in texts]) for i, texts in rows)
    matched = 0
    for match in expressions:
        theirs = table.bm25(match, MEMORY_WEIGHTS)
        _assert_same_ranking(theirs, corpus.search(parse_match(match)), match)
        matched += bool(theirs)
    assert matched > len(expressions) // 2


def test_episodes_rank_as_sqlite_ranks_after_deletes(expressions: list[str]) -> None:
    texts = _texts()
    table = Fts5Table()
    table.add([(i, (text,)) for i, text in enumerate(texts, 1)])
    corpus = Corpus(EPISODE_WEIGHTS)
    corpus.add((i, [tokens(text)]) for i, text in enumerate(texts, 1))
    for rowid in range(1, len(texts), 5):
        table.delete(rowid)
        corpus.remove(rowid)
    for match in expressions:
        _assert_same_ranking(table.bm25(match), corpus.search(parse_match(match)), match)


@pytest.mark.parametrize(
    ("rows", "hits", "expected"),
    [
        (10, 1, 1.8458266904983307),
        (10, 5, IDF_FLOOR),
        (10, 9, IDF_FLOOR),
        (1, 0, 1.0986122886681098),
    ],
)
def test_idf(rows: int, hits: int, expected: float) -> None:
    assert idf(rows, hits) == expected


@pytest.mark.parametrize(
    ("column", "phrase", "expected"),
    [
        (["a", "a", "a"], Phrase(("a", "a")), 2),  # overlapping hits both count
        (["new", "job", "new", "jobless"], Phrase(("new", "job"), prefix=True), 2),
        (["new", "job"], Phrase(("job", "new")), 0),
        (["run", "run"], Phrase(("run",)), 2),
        (["run"], Phrase(()), 0),
        (["ru"], Phrase(("run",), prefix=True), 0),
    ],
)
def test_phrase_hits(column: list[str], phrase: Phrase, expected: int) -> None:
    assert phrase_hits(column, phrase) == expected


def test_score_of_one_row() -> None:
    # one phrase held once (weight 1.0) in a row of 4 tokens, average 8: 0.5 * 2.2 / (1 + 1.2 * 0.625)
    assert score([1.0], [0.5], 4, 8.0) == pytest.approx(0.6285714285714286, abs=1e-15)
