"""FTS5's `porter unicode61 remove_diacritics 2` tokenizer in pure Python, and the phrases of a MATCH expression.

`tokens(text)` gives the tokens SQLite's FTS5 indexes for a text, in order (a token's position is its index):
unicode61 splits at every character that is not a letter, digit or private-use character of its frozen
Unicode 6.1 tables (scripts/unicode61_tables.py reads them from SQLite into unicode61.py), lets combining
diacritics continue a token, folds case and removes diacritics; the porter step then stems tokens of 3 to 64
UTF-8 bytes with SQLite's own reading of the Porter algorithm, and FTS5 keeps at most 32,768 bytes of a token.
A MATCH expression of quoted terms (as `match_terms` gives them) reads as a list of phrases: each term is
tokenized the same way, a term of several tokens ("foo_bar", "e-mail") is a phrase, `*` makes the last token
a prefix (stemmed like any token), and a term with no token matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from .unicode61 import CONTINUE_RANGES, FOLD_RUNS, TOKEN_RANGES

MAX_TOKEN_BYTES = 32_768  # FTS5 stores no more of a token than this
PORTER_MIN_BYTES = 3
PORTER_MAX_BYTES = 64
MAX_MATCH_TERMS = 32
MAX_MATCH_INPUT_CHARS = 20_000
OPERATORS = ("OR", "AND")

_WORD = re.compile(r"\w+", re.UNICODE)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{first:08X}-\\U{last:08X}" for first, last in ranges)


_START = "0-9A-Za-z" + _char_class(TOKEN_RANGES)
_TOKEN = re.compile(f"[{_START}][{_START}{_char_class(CONTINUE_RANGES)}]*")


def _fold_table() -> dict[int, str]:
    table = {cp: chr(cp + 32) for cp in range(ord("A"), ord("Z") + 1)}
    for first, last, target, step in FOLD_RUNS:
        for cp in range(first, last + 1):
            table[cp] = chr(target + step * (cp - first)) if target else ""
    return table


_FOLD = _fold_table()


def tokens(text: str) -> list[str]:
    """The tokens FTS5 stores for `text`, in order (lone surrogates, which SQLite cannot hold, separate)."""
    return [_final(raw.translate(_FOLD)) for raw in _TOKEN.findall(text)]


def _final(folded: str) -> str:
    """Stem a folded token and keep what FTS5 keeps of it."""
    if folded.isascii():
        size = len(folded)
        stemmed = porter_stem(folded) if PORTER_MIN_BYTES <= size <= PORTER_MAX_BYTES else folded
        return stemmed[:MAX_TOKEN_BYTES]
    raw = folded.encode("utf-8")
    if PORTER_MIN_BYTES <= len(raw) <= PORTER_MAX_BYTES:
        return porter_stem(folded)
    if len(raw) > MAX_TOKEN_BYTES:
        # FTS5 cuts at the byte; a character cut in two is left out here (two tokens sharing 32 KB aside, alike)
        return raw[:MAX_TOKEN_BYTES].decode("utf-8", errors="ignore")
    return folded


def match_terms(text: str) -> list[str]:
    """The distinct lower-cased word runs a MATCH expression is built from (at most 32, from the first 20,000
    characters), in order."""
    terms: list[str] = []
    for word in _WORD.findall(text[:MAX_MATCH_INPUT_CHARS]):
        word = word.lower()
        if word not in terms:
            terms.append(word)
        if len(terms) >= MAX_MATCH_TERMS:
            break
    return terms


@dataclass(frozen=True)
class Phrase:
    """One quoted term of a MATCH expression as FTS5 evaluates it: its tokens in order, the last a prefix when
    `prefix`; no tokens = matches no row."""

    tokens: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True)
class MatchQuery:
    """A MATCH expression of phrases joined by one operator: OR (any phrase) or AND (every phrase)."""

    phrases: tuple[Phrase, ...]
    operator: str = "OR"


def phrase(term: str, *, prefix: bool = False) -> Phrase:
    """The phrase FTS5 makes of a quoted term."""
    return Phrase(tuple(tokens(term)), prefix)


_QUOTED = re.compile(r'\s*"((?:[^"]|"")*)"(\*?)\s*')
_JOIN = re.compile(r"(OR|AND)(?=\s|\")")


def parse_match(expression: str) -> MatchQuery:
    """The phrases of a MATCH expression of quoted terms, each optionally followed by `*`, joined by OR or AND
    (the one form the store builds). Anything else raises ValueError, never guessed at."""
    phrases: list[Phrase] = []
    operators: set[str] = set()
    at = 0
    while True:
        quoted = _QUOTED.match(expression, at)
        if quoted is None:
            raise ValueError(f"not a quoted term at character {at} of the MATCH expression")
        phrases.append(phrase(quoted.group(1).replace('""', '"'), prefix=bool(quoted.group(2))))
        at = quoted.end()
        if at == len(expression):
            break
        joined = _JOIN.match(expression, at)
        if joined is None:
            raise ValueError(f"expected OR or AND at character {at} of the MATCH expression")
        operators.add(joined.group(1))
        at = joined.end()
    if len(operators) > 1:
        raise ValueError("a MATCH expression mixing OR and AND is not one the store builds")
    return MatchQuery(tuple(phrases), operators.pop() if operators else "OR")


@lru_cache(maxsize=65_536)
def porter_stem(token: str) -> str:
    """SQLite FTS5's Porter stem of a folded token of 3 to 64 UTF-8 bytes. The steps work on bytes: a byte
    outside ASCII is a consonant, and suffixes are ASCII, so a character is never cut."""
    word = token.encode("utf-8").decode("latin-1")
    word = _step1(word)
    word = _apply_rules(word, _STEP2)
    word = _apply_rules(word, _STEP3)
    word = _apply_rules(word, _STEP4)
    return _step5(word).encode("latin-1").decode("utf-8")


def _is_vowel(char: str, y_is_vowel: bool) -> bool:
    return char in "aeiou" or (y_is_vowel and char == "y")


def _past_vowel_consonant(stem: str, after_consonant: bool) -> int:
    """Length of the shortest head of `stem` holding a vowel followed by a consonant (0 = none), `y` being a
    vowel after a consonant."""
    consonant = after_consonant
    i = 0
    while i < len(stem):
        consonant = not _is_vowel(stem[i], consonant)
        if not consonant:
            break
        i += 1
    for j in range(i + 1, len(stem)):
        consonant = not _is_vowel(stem[j], consonant)
        if consonant:
            return j + 1
    return 0


def _m_above_0(stem: str) -> bool:
    return _past_vowel_consonant(stem, False) > 0


def _m_above_1(stem: str) -> bool:
    head = _past_vowel_consonant(stem, False)
    return head > 0 and _past_vowel_consonant(stem[head:], True) > 0


def _m_is_1(stem: str) -> bool:
    head = _past_vowel_consonant(stem, False)
    return head > 0 and _past_vowel_consonant(stem[head:], True) == 0


def _ends_cvc(stem: str) -> bool:
    """Porter's *o: consonant, vowel, consonant at the end, the last not w, x or y."""
    if stem[-1] in "wxy":
        return False
    pattern = []
    consonant = False
    for char in stem:
        consonant = not _is_vowel(char, consonant)
        pattern.append(consonant)
    return pattern[-3:] == [True, False, True]


def _m_above_1_ends_s_or_t(stem: str) -> bool:
    return stem[-1] in "st" and _m_above_1(stem)


def _has_vowel(stem: str) -> bool:
    return any(_is_vowel(char, i > 0) for i, char in enumerate(stem))


# (suffix, condition on the stem before it, replacement): the first rule whose suffix ends the word (with at
# least one byte before it) decides, whether or not its condition holds
_Rule = tuple[str, Callable[[str], bool], str]
_STEP2: tuple[_Rule, ...] = (
    ("ational", _m_above_0, "ate"), ("tional", _m_above_0, "tion"), ("enci", _m_above_0, "ence"),
    ("anci", _m_above_0, "ance"), ("izer", _m_above_0, "ize"), ("logi", _m_above_0, "log"),
    ("bli", _m_above_0, "ble"), ("alli", _m_above_0, "al"), ("entli", _m_above_0, "ent"),
    ("eli", _m_above_0, "e"), ("ousli", _m_above_0, "ous"), ("ization", _m_above_0, "ize"),
    ("ation", _m_above_0, "ate"), ("ator", _m_above_0, "ate"), ("alism", _m_above_0, "al"),
    ("iveness", _m_above_0, "ive"), ("fulness", _m_above_0, "ful"), ("ousness", _m_above_0, "ous"),
    ("aliti", _m_above_0, "al"), ("iviti", _m_above_0, "ive"), ("biliti", _m_above_0, "ble"),
)  # fmt: skip
_STEP3: tuple[_Rule, ...] = (
    ("ical", _m_above_0, "ic"), ("ness", _m_above_0, ""), ("icate", _m_above_0, "ic"),
    ("iciti", _m_above_0, "ic"), ("ful", _m_above_0, ""), ("ative", _m_above_0, ""),
    ("alize", _m_above_0, "al"),
)  # fmt: skip
_STEP4: tuple[_Rule, ...] = (
    ("al", _m_above_1, ""), ("ance", _m_above_1, ""), ("ence", _m_above_1, ""), ("er", _m_above_1, ""),
    ("ic", _m_above_1, ""), ("able", _m_above_1, ""), ("ible", _m_above_1, ""), ("ant", _m_above_1, ""),
    ("ement", _m_above_1, ""), ("ment", _m_above_1, ""), ("ent", _m_above_1, ""),
    ("ion", _m_above_1_ends_s_or_t, ""), ("ou", _m_above_1, ""), ("ism", _m_above_1, ""),
    ("ate", _m_above_1, ""), ("iti", _m_above_1, ""), ("ous", _m_above_1, ""), ("ive", _m_above_1, ""),
    ("ize", _m_above_1, ""),
)  # fmt: skip


def _apply_rules(word: str, rules: tuple[_Rule, ...]) -> str:
    for suffix, condition, replacement in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if condition(stem) else word
    return word


def _step1(word: str) -> str:
    """Plurals, -ed and -ing (1a, 1b and its clean-up), then a final y after a vowel becomes i (1c)."""
    word, stripped = _step1b(_step1a(word))
    if stripped:
        word = _step1b_tidy(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _step1a(word: str) -> str:
    if not word.endswith("s"):
        return word
    if word[-2:-1] == "e":
        if (len(word) > 4 and word[-4:-2] == "ss") or (len(word) > 3 and word[-3] == "i"):
            return word[:-2]
        return word[:-1]
    return word[:-1] if word[-2:-1] != "s" else word


def _step1b(word: str) -> tuple[str, bool]:
    """(the word, whether -ed or -ing went): -eed becomes -ee after a stem of m > 0 and stops there either way;
    -ed and -ing go after a stem holding a vowel."""
    if len(word) > 3 and word.endswith("eed"):
        return (word[:-1] if _m_above_0(word[:-3]) else word), False
    for suffix in ("ed", "ing"):
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            return (stem, True) if _has_vowel(stem) else (word, False)
    return word, False


def _step1b_tidy(word: str) -> str:
    """After -ed or -ing went: at, bl, iz take an e; a doubled consonant (but l, s, z) is halved; a short cvc
    stem takes an e."""
    for suffix, replacement in (("at", "ate"), ("bl", "ble"), ("iz", "ize")):
        if len(word) > 2 and word.endswith(suffix):
            return word[:-2] + replacement
    last = word[-1]
    if len(word) > 1 and not _is_vowel(last, False) and last not in "lsz" and last == word[-2]:
        return word[:-1]
    if _m_is_1(word) and _ends_cvc(word):
        return word + "e"
    return word


def _step5(word: str) -> str:
    """A final e goes after a long stem (or a short one not ending cvc); a final ll after a long stem."""
    if word.endswith("e"):
        stem = word[:-1]
        if _m_above_1(stem) or (_m_is_1(stem) and not _ends_cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith("ll") and _m_above_1(word[:-1]):
        word = word[:-1]
    return word
