"""What prefetch injects unasked: turns that tell something, and each thing once.

The host keeps every prefetch in its history and sends it again with each later turn, so a line that tells the agent
nothing is paid for again and again: a past turn in which the user only asked, a turn whose answering memories the
agent already holds, or a line whose words a line given earlier already holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..curation.provenance import ASSISTANT, TOOL, USER, origin_of
from ..text import search_words
from ..types import Episode, Memory
from .query import only_asks
from .tuning import STEM_CHARS

Words = frozenset[str]


def said_on(memory: Memory, role: str) -> bool:
    """Whether `memory`'s words came from the `role` side of its turn: the user's own from what the user said, the
    assistant's (or a tool's, quoted in its answer) from the answer; an explicit write from either."""
    origin = origin_of(memory.metadata)
    if origin == USER:
        return role == "user"
    if origin in (ASSISTANT, TOOL):
        return role != "user"
    return True


def asks_only(episode: Episode, told: Sequence[Memory]) -> bool:
    """A turn's message that only asks: curation took no memory from it (`told`: the memories of its turn said on its
    side) and every sentence of it is a question or nothing (`query.only_asks`). Such a message tells the agent
    nothing; the tool still finds it."""
    return not told and only_asks(episode.content)


def words_of(text: str) -> Words:
    """The words of a text as coverage compares them: every word (so "not" and "never" count), cut to STEM_CHARS
    letters (deploy/deploying)."""
    return frozenset(w[:STEM_CHARS] for w in search_words(text))


def covered(words: Words, by: Iterable[Words]) -> bool:
    """Whether one of `by` holds every one of `words`: a line that says nothing the other did not."""
    return any(words <= other for other in by)
