"""A place that closed for good: "Casa Pepe closed down last week" supersedes "Our favourite restaurant is Casa
Pepe" and "We go to Casa Pepe every Friday", so the bulletin stops offering a place that is gone.

The statement must say in its own words, not asked or hedged, that a place it names (capitalised words right before
the verb) closed for good: "closed down", "shut for good", "went out of business", not "closed early today". The
memory must be a preference or a fact (what the user likes or does there, never who they are) naming the same place
in the same words.
"""

from __future__ import annotations

import functools
import re

from ..text import holds_name
from ..types import MemoryType
from .changes import STATEMENT_CACHE
from .sentences import own_words

# the place's name (up to four capitalised words, a leading "The" left out) and the words that say it is gone
_CLOSED_FOR_GOOD = re.compile(
    r"(?:\bthe\s+)?(?P<name>(?!(?:i|we|they|it|he|she|you|this|that|these|those)\b)(?-i:[A-Z][\w'’&-]*)"
    r"(?:\s+(?-i:[A-Z][\w'’&-]*)){0,3}),?\s+"
    r"(?:has\s+|have\s+|had\s+|just\s+|finally\s+|actually\s+|officially\s+|is\s+|are\s+)*"
    r"(?:clos(?:ed|ing)\s+(?:down|for good|its doors|their doors|permanently)|"
    r"shut(?:ting)?\s+(?:down|for good|its doors|their doors|permanently)|"
    r"went\s+(?:out of business|bust|under)|(?:is|are)\s+(?:gone|out of business)|closed down)\b",
    re.IGNORECASE,
)
# only feared, asked, or denied
_UNSURE = re.compile(
    r"\?|\b(?:might|maybe|perhaps|probably|rumou?r\w*|heard|if|unless|not|never|hope|afraid|worried)\b|n't\b|n’t\b",
    re.IGNORECASE,
)
_KINDS = (MemoryType.PREFERENCE, MemoryType.FACT)


def closed_places(text: str) -> list[str]:
    """The names of the places `text` says, in its own words, closed for good ("Casa Pepe closed down" ->
    ["Casa Pepe"]); none when anything in it is unsure."""
    return list(_closed_names(text))


@functools.lru_cache(maxsize=STATEMENT_CACHE)  # see changes.STATEMENT_CACHE
def _closed_names(text: str) -> tuple[str, ...]:
    own = own_words(text)
    if _UNSURE.search(own):
        return ()
    return tuple(m["name"] for m in _CLOSED_FOR_GOOD.finditer(own))


def says_gone(text: str) -> bool:
    """Whether `text` says a place it names closed for good."""
    return bool(_closed_names(text))


def gone(item_type: MemoryType, item: str, statement: str) -> str | None:
    """Why `statement` ends `item` (a current memory), or None: it names a place the statement says closed."""
    if item_type not in _KINDS:
        return None
    for name in _closed_names(statement):
        if holds_name(item, name):
            return "gone: a place that closed for good"
    return None
