"""Words, normalised names and token counts: each kind on a table of cases, the differences between them named."""

from __future__ import annotations

import pytest

from hermes_bowerbird.text import (
    chat_words,
    estimate_chunk_tokens,
    estimate_tokens,
    holds_name,
    normalise_entity,
    search_word_spans,
    search_words,
    stem_words,
    value_words,
    whitespace_token_spans,
    whitespace_tokens,
    word_count,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where does Ana live?", ["where", "does", "ana", "live"]),
        ("next.js and C++", ["next", "js", "and", "c"]),
        ("Zoë's café in São Paulo", ["zoë", "s", "café", "in", "são", "paulo"]),
        ("snake_case stays whole", ["snake_case", "stays", "whole"]),
        ("", []),
    ],
)
def test_search_words(text: str, expected: list[str]) -> None:
    assert search_words(text) == expected


def test_search_word_spans_point_at_the_words() -> None:
    assert search_word_spans("St. Louis!") == [(0, 2), (4, 9)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("O'Brien moved to X-Men HQ", ["O'Brien", "moved", "to", "X-Men", "HQ"]),
        ("on 2024-05-01, at 9", ["on", "2024-05-01", "at", "9"]),
        ("next.js", ["next", "js"]),
    ],
)
def test_value_words(text: str, expected: list[str]) -> None:
    assert [m.group() for m in value_words(text)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I live in Porto", ["live", "Porto"]),
        ("snake_case ab_cdef", ["snake", "case", "cdef"]),
        ("Zoë visits Köln", ["Zoë", "visits", "Köln"]),
    ],
)
def test_stem_words(text: str, expected: list[str]) -> None:
    assert stem_words(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I don't like R&D, e.g. meetings.", ["I", "don't", "like", "R&D", "e.g", "meetings"]),
        ("well-known -- dash", ["well-known", "dash"]),
        ("Zoë", ["Zo"]),
        ("it’s 5 o'clock...", ["it’s", "5", "o'clock"]),
    ],
)
def test_chat_words(text: str, expected: list[str]) -> None:
    assert chat_words(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key=abc123  next\tline\n", ["key=abc123", "next", "line"]),
        ("", []),
    ],
)
def test_whitespace_tokens(text: str, expected: list[str]) -> None:
    assert whitespace_tokens(text) == expected


def test_whitespace_token_spans() -> None:
    assert whitespace_token_spans(" ab  c") == [(1, 3), (5, 6)]


@pytest.mark.parametrize(("text", "expected"), [("- one two", 3), ("  ", 0), ("a\nb\tc", 3)])
def test_word_count(text: str, expected: int) -> None:
    assert word_count(text) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("The Beatles", "beatles"),
        ("Ana's", "ana"),
        ("Next.js", "next.js"),
        ("C++", "c++"),
        ("  St.   Louis ", "st. louis"),
        ("@handle", "@handle"),
    ],
)
def test_normalise_entity(name: str, expected: str) -> None:
    assert normalise_entity(name) == expected


@pytest.mark.parametrize(
    ("text", "name", "ignore_case", "held"),
    [
        ("We go to Casa Pepe every Friday.", "Casa Pepe", False, True),
        ("Anastasia moved to Leeds.", "Ana", False, False),  # inside a longer word
        ("Ana's flat is in Leeds.", "Ana", False, False),  # beside an apostrophe
        ("we use next.js daily", "Next.js", False, False),
        ("we use next.js daily", "Next.js", True, True),
    ],
)
def test_holds_name(text: str, name: str, ignore_case: bool, held: bool) -> None:
    assert holds_name(text, name, ignore_case=ignore_case) is held


def test_a_possessive_holds_the_name_only_when_asked() -> None:
    assert not holds_name("Chloe's rate went up", "Chloe")
    assert holds_name("Chloe's rate went up", "Chloe", possessive=True)
    assert holds_name("our babysitter’s rate", "Babysitter", ignore_case=True, possessive=True)
    # still a whole word, and not the end of another one's possessive
    assert not holds_name("Chloes rate", "Chloe", possessive=True)
    assert not holds_name("O'Chloe's", "Chloe", possessive=True)


@pytest.mark.parametrize(
    ("text", "expected"), [("", 0), ("abcd", 1), ("abcde", 2), ("x" * 400, 100)]
)
def test_estimate_tokens(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("one two three", 3),
        ("internationalisation", 4),
        ("a  b", 2),
    ],
)
def test_estimate_chunk_tokens(text: str, expected: int) -> None:
    assert estimate_chunk_tokens(text) == expected
