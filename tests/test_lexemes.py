"""The pure-Python FTS5 tokenizer against SQLite's own, and the phrases read from MATCH expressions."""

from __future__ import annotations

import string
from collections.abc import Iterator

import pytest
from fts_oracle import DEV_SETS, Fts5Table, dev_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_bowerbird.store import fts_match_expression
from hermes_bowerbird.store.lexemes import (
    MatchQuery,
    Phrase,
    match_terms,
    parse_match,
    porter_stem,
    tokens,
)


def _mismatches(texts: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(text, ours, SQLite's) for each text whose tokens differ."""
    table = Fts5Table()
    table.add([(i, (text,)) for i, text in enumerate(texts, 1)])
    stored = table.tokens()
    out = []
    for i, text in enumerate(texts, 1):
        theirs = stored.get(i, [[]])[0]
        ours = tokens(text)
        if ours != theirs:
            out.append((text[:80], ours[:10], theirs[:10]))
    return out


@pytest.mark.parametrize("name", DEV_SETS)
def test_every_dev_set_text_tokenizes_as_sqlite_does(name: str) -> None:
    texts = dev_texts(name)
    if texts is None:
        pytest.skip(f"{name} data not available")
    assert _mismatches(texts) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Running runs ran", ["run", "run", "ran"]),
        ("foo_bar", ["foo", "bar"]),
        ("e-mail", ["e", "mail"]),
        ("Café NAÏVE résumés", ["cafe", "naiv", "resum"]),
        ("is as us", ["is", "as", "us"]),  # under 3 bytes: not stemmed
        ("cats ties ponies caresses", ["cat", "ti", "poni", "caress"]),
        ("agreed feed plastered motoring sing", ["agre", "feed", "plaster", "motor", "sing"]),
        (
            "hopping tanned falling hissing fizzed failing filing",
            ["hop", "tan", "fall", "hiss", "fizz", "fail", "file"],
        ),
        ("happy sky relational generalizations", ["happi", "sky", "relat", "gener"]),
        ("2024s 3rd 1,000.50", ["2024", "3rd", "1", "000", "50"]),
        ("don't it's O'Brien", ["don", "t", "it", "s", "o", "brien"]),
        ("日本語のテキスト", ["日本語のテキスト"]),
        ("emoji😀inside", ["emoji", "insid"]),
        ("e\u0301cole", ["ecol"]),  # a combining accent continues a token and goes
        ("\u0301leading", ["lead"]),  # ... but never starts one
        ("ǅungla ﬁne ß ẞ İstanbul", ["ǆungla", "ﬁne", "ß", "ß", "istanbul"]),
        ("x²³ Ⅻ ½", ["x²³", "ⅻ", "½"]),
        ("naïvetés ÆSIR Œuvre", ["naivet", "æsir", "œuvr"]),
        ("a" * 64 + "ing", ["a" * 64 + "ing"]),  # over 64 bytes: not stemmed
        ("x" * 40_000, ["x" * 32_768]),  # FTS5 keeps 32 KB of a token
        ("é" * 20_000, ["e" * 20_000]),
        ("", []),
        ("\ud800 lone surrogate", ["lone", "surrog"]),
    ],
)
def test_edge_cases(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_edge_cases_agree_with_sqlite() -> None:
    texts = [
        "Running runs ran",
        "foo_bar e-mail",
        "Café NAÏVE résumés",
        "日本語のテキスト emoji😀inside",
        "e\u0301cole \u0301leading",
        "ǅungla ﬁne ß ẞ İstanbul x²³ Ⅻ ½",
        "a" * 64 + "ing",
        "x" * 40_000,
        "\x00 nul \U0010ffff \ufffe \ufeffbom \u200dzwj",
    ]
    assert _mismatches(texts) == []


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("ies", "ie"),
        ("aed", "a"),
        ("eed", "e"),
        ("bled", "bled"),
        ("conflated", "conflat"),
        ("troubled", "troubl"),
        ("sized", "size"),
        ("vietnamization", "vietnam"),
        ("hopefulness", "hope"),
        ("electrical", "electr"),
        ("adjustment", "adjust"),
        ("adoption", "adopt"),
        ("controll", "control"),
        ("roll", "roll"),
        ("yyy", "yyi"),
        ("être", "être"),
    ],
)
def test_porter_stems(word: str, stem: str) -> None:
    assert porter_stem(word) == stem
    assert _mismatches([word]) == []


_ODD = st.sampled_from(
    [
        *"aeiouyAEIOUY _-'.,0123456789\t\n\"*:()",
        *"éüßİǅΩﬁⅫ²½日本😀ΐẞ",
        *"\u0301\u0308\u0483\u200d\ufeff\ufffe\uffff\ue000\U000e0001\U0010ffff\x00",
    ]
)
_WORDS = st.sampled_from(
    [
        *(
            "generalizations",
            "oscillators",
            "agreed",
            "feeding",
            "bled",
            "sky",
            "flies",
            "relational",
        ),
        *(
            "conditional",
            "digitizer",
            "formaliti",
            "triplicate",
            "goodness",
            "allowance",
            "airliner",
        ),
        *(
            "adjustable",
            "replacement",
            "adoption",
            "communism",
            "homologous",
            "bowdlerize",
            "hopping",
        ),
        *(
            "tanned",
            "falling",
            "hissing",
            "fizzed",
            "failing",
            "filing",
            "sing",
            "plastered",
            "motoring",
        ),
    ]
)
_TEXT = st.lists(
    st.one_of(
        st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
        st.text(_ODD, max_size=12),
        _WORDS,
        st.text(string.ascii_letters, min_size=1, max_size=12),
    ),
    max_size=12,
).map(" ".join)


@pytest.fixture(scope="module")
def oracle() -> Iterator[Fts5Table]:
    yield Fts5Table()


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_TEXT)
def test_any_text_tokenizes_as_sqlite_does(oracle: Fts5Table, text: str) -> None:
    oracle.add([(1, (text,))])
    try:
        assert tokens(text) == oracle.tokens().get(1, [[]])[0]
    finally:
        oracle.delete(1)


@pytest.mark.parametrize(
    ("text", "prefix_min", "expected"),
    [
        ("Where did Caroline go?", 0, [("where",), ("did",), ("carolin",), ("go",)]),
        ("running shoes", 4, [("run",), ("shoe",)]),
        ("foo_bar e-mail", 0, [("foo", "bar"), ("e",), ("mail",)]),
        ("ship_it", 3, [("ship", "it")]),
    ],
)
def test_match_expressions_read_as_phrases(
    text: str, prefix_min: int, expected: list[tuple[str, ...]]
) -> None:
    match = fts_match_expression(text, prefix_min=prefix_min)
    assert match is not None
    query = parse_match(match)
    assert [p.tokens for p in query.phrases] == expected
    terms = match_terms(text)
    assert [p.prefix for p in query.phrases] == [
        bool(prefix_min) and len(t) >= prefix_min for t in terms
    ]
    assert query.operator == "OR"


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('"a"', MatchQuery((Phrase(("a",)),))),
        ('"runs"* AND "x""y"', MatchQuery((Phrase(("run",), True), Phrase(("x", "y"))), "AND")),
        ('"_" OR "ok"', MatchQuery((Phrase(()), Phrase(("ok",))))),
    ],
)
def test_parse_match(expression: str, expected: MatchQuery) -> None:
    assert parse_match(expression) == expected


@pytest.mark.parametrize(
    "expression",
    [
        'a OR "b"',
        '"a" OR',
        '"a" NOT "b"',
        '"a" OR "b" AND "c"',
        '"a',
        "",
        'NEAR("a" "b")',
        '"a" "b"',
        '"a"**',
    ],
)
def test_parse_match_refuses_what_the_store_never_builds(expression: str) -> None:
    with pytest.raises(ValueError, match="MATCH expression"):
        parse_match(expression)
