"""Leaf module: what a word, a normalised name and a token count are, each defined once.

Several kinds of word are needed and they differ on purpose; each is named for what it keeps:
- `search_words`: Unicode letter/digit/underscore runs, lower-cased. What search matches on (keywords, entity
  names in a query, term overlap): "next.js" is two words, so a query need not type the punctuation.
- `value_words`: runs that keep inner apostrophes and hyphens ("O'Brien", "X-Men", "2024-05"), so a changed value
  in a statement is compared whole.
- `stem_words`: letter/digit runs of three or more (no underscores): the content words that tell whose text a
  model's sentence was taken from; short function words carry no such signal.
- `chat_words`: ASCII words with inner apostrophes, dots, ampersands and hyphens ("don't", "e.g", "R&D"), edge
  punctuation stripped: how long a chat sentence is, as the extraction thresholds were tuned on.
- `whitespace_tokens`: whatever whitespace separates (`str.split`): word counts of rendered text (bulletin caps)
  and token alignment of a redactor's output with its input.

One name normaliser, `normalise_entity`: the stored key of an entity (punctuation inside a name kept: "c++",
"next.js" and "st. louis" stay distinct names; a query matches it as written or as its search words joined).
Two token counts: `estimate_tokens` is what a text costs in a prompt (characters / 4);
`estimate_chunk_tokens` sizes episode chunks for the embedding model from the words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

CHARS_PER_TOKEN = 4
# What precedes "day" in each weekday's name, for patterns ("(?:mon|...)days?" reads "monday" and "mondays").
WEEKDAY_STEMS = "mon|tues|wednes|thurs|fri|satur|sun"
# The months by name, but for May, which is also a verb: a pattern names it only where a month is expected.
MONTHS_BUT_MAY = "January|February|March|April|June|July|August|September|October|November|December"
# The number words one to nine: ages ("forty-two") and spans ("three weeks ago") are read with them.
DIGIT_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
}

_SEARCH_WORD = re.compile(r"\w+")
_VALUE_WORD = re.compile(r"[\w'-]+")
_STEM_WORD = re.compile(r"[^\W_]{3,}")
_CHAT_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’&._-]*")
_WHITESPACE_TOKEN = re.compile(r"\S+")
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
_PUNCT_EDGES = re.compile(r"^[^\w@#]+|[^\w+#]+$")


# -- words ------------------------------------------------------------------------------------------------------
def search_words(text: str) -> list[str]:
    """Unicode word runs (`\\w+`), lower-cased."""
    return [w.lower() for w in _SEARCH_WORD.findall(text)]


def search_word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `search_words` run, in order."""
    return [m.span() for m in _SEARCH_WORD.finditer(text)]


def value_words(text: str) -> Iterator[re.Match[str]]:
    """Word runs keeping inner apostrophes and hyphens, as matches (callers look at what precedes a word)."""
    return _VALUE_WORD.finditer(text)


def stem_words(text: str) -> list[str]:
    """Letter/digit runs of at least three characters, as written."""
    return _STEM_WORD.findall(text)


def chat_words(text: str) -> list[str]:
    """ASCII words with inner apostrophes, hyphens, dots and ampersands; trailing punctuation stripped."""
    return [w.rstrip("._-'’") or w for w in _CHAT_WORD.findall(text)]


def whitespace_tokens(text: str) -> list[str]:
    """The pieces whitespace separates."""
    return _WHITESPACE_TOKEN.findall(text)


def whitespace_token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every `whitespace_tokens` piece, in order."""
    return [m.span() for m in _WHITESPACE_TOKEN.finditer(text)]


def word_count(text: str) -> int:
    """How many whitespace-separated tokens `text` has."""
    return len(text.split())


# -- names ------------------------------------------------------------------------------------------------------
def normalise_entity(name: str) -> str:
    """The stored key of an entity name: lower-case, single spaces, no possessive, no edge punctuation, no
    leading "the" ("The Beatles's" -> "beatles"); punctuation inside the name stays ("next.js", "c++")."""
    key = " ".join(name.replace("’", "'").split()).lower()
    key = _POSSESSIVE.sub("", key)
    key = _PUNCT_EDGES.sub("", key)
    if key.startswith("the "):
        key = key[4:]
    return key


def holds_name(
    text: str, name: str, *, ignore_case: bool = False, possessive: bool = False
) -> bool:
    """Whether `text` holds `name` as written, on its own: not inside a longer word, nor beside an apostrophe
    ("Casa Pepe" is in "We go to Casa Pepe", "Ana" is not in "Anastasia"); with `possessive`, an apostrophe may
    follow ("Chloe" is in "Chloe's rate")."""
    flags = re.IGNORECASE if ignore_case else 0
    after = r"(?!\w)" if possessive else r"(?![\w'’])"
    return re.search(rf"(?<![\w'’]){re.escape(name)}{after}", text, flags) is not None


# -- token counts -----------------------------------------------------------------------------------------------
def estimate_tokens(text: str) -> int:
    """Prompt tokens, counted cheaply as ceil(characters / 4) (the usual ratio for English with BPE tokenizers)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_chunk_tokens(text: str) -> int:
    """A model-free token estimate for chunking: one token per word plus one per six characters of a long word."""
    return sum(1 + len(word) // 6 for word in text.split())
