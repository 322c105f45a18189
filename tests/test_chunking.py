"""Episode chunking: paragraphs kept whole, oversized paragraphs split at sentences, tiny fragments dropped."""

from __future__ import annotations

import pytest

from hermes_bowerbird.curation.chunking import chunk_text
from hermes_bowerbird.text import estimate_chunk_tokens


def _sentence(i: int) -> str:
    return (
        f"Sentence number {i} talks about the garden, the greenhouse and the barn conversion plans."
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("ok", []),  # below 20 characters: dropped
        ("Thanks, that helps!", []),  # 19 characters
        ("I moved to Lisbon last month.", ["I moved to Lisbon last month."]),
        (
            "First paragraph about Lisbon.\n\nSecond paragraph about Porto.",
            ["First paragraph about Lisbon.\n\nSecond paragraph about Porto."],
        ),
        ("  padded text that is long enough  \n\n\n", ["padded text that is long enough"]),
    ],
)
def test_small_texts(text: str, expected: list[str]) -> None:
    assert chunk_text(text) == expected


def test_paragraphs_are_packed_up_to_the_limit_and_never_split_when_they_fit() -> None:
    paragraphs = [" ".join(_sentence(p * 10 + i) for i in range(5)) for p in range(6)]
    chunks = chunk_text("\n\n".join(paragraphs), max_tokens=200)
    assert len(chunks) > 1
    assert all(estimate_chunk_tokens(c) <= 200 for c in chunks)
    rebuilt = [p for c in chunks for p in c.split("\n\n")]
    assert rebuilt == paragraphs  # verbatim, in order, each paragraph whole


def test_an_oversized_paragraph_is_split_at_sentence_boundaries() -> None:
    sentences = [_sentence(i) for i in range(60)]
    chunks = chunk_text(" ".join(sentences), max_tokens=100)
    assert len(chunks) >= 5
    assert all(estimate_chunk_tokens(c) <= 100 for c in chunks)
    for chunk in chunks:
        assert chunk.startswith("Sentence number") and chunk.endswith("plans.")
    assert " ".join(chunks) == " ".join(sentences)


def test_a_sentence_longer_than_the_limit_is_cut_at_words() -> None:
    words = [f"word{i}" for i in range(400)]
    chunks = chunk_text(" ".join(words), max_tokens=50)
    assert all(estimate_chunk_tokens(c) <= 50 for c in chunks)
    assert " ".join(chunks).split() == words


def test_default_limit_is_about_512_tokens() -> None:
    text = " ".join(_sentence(i) for i in range(200))  # ~3,000 tokens
    chunks = chunk_text(text)
    assert 4 <= len(chunks) <= 8
    assert all(300 <= estimate_chunk_tokens(c) <= 512 for c in chunks[:-1])


def test_a_short_trailing_fragment_is_dropped_when_it_stands_alone() -> None:
    long_paragraph = " ".join(_sentence(i) for i in range(40))
    chunks = chunk_text(long_paragraph + " Ok.", max_tokens=100)
    assert chunks[-1].endswith("Ok.")  # packed with its neighbour, not dropped
    assert chunk_text("Fine.\n\nOk.", max_tokens=100) == []


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("", 0, 0),
        ("one", 1, 1),
        ("a quick brown fox jumps over the lazy dog", 9, 12),
        ("internationalisation", 2, 5),
    ],
)
def test_token_estimate(text: str, low: int, high: int) -> None:
    assert low <= estimate_chunk_tokens(text) <= high


def test_a_short_leading_fragment_joins_the_next_chunk() -> None:
    long_paragraph = " ".join(_sentence(i) for i in range(40))
    chunks = chunk_text("Hi.\n\n" + long_paragraph, max_tokens=100)
    assert chunks[0].startswith("Hi. Sentence number 0")
