"""What prefetch injects unasked: turns that tell something, each thing once, the best answer first, and no line
that adds nothing to the lines above it.

The host keeps every prefetch in its history and sends it again with each later turn, so a line that tells the agent
nothing is paid for again and again: a past turn in which the user only asked, a turn whose answering memories the
agent already holds, or a line whose words an earlier line already holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..curation.provenance import ASSISTANT, TOOL, USER, origin_of
from ..text import search_words
from ..types import Episode, Memory
from .fusion import Fused, Key
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


def best_answer_first(chosen: Sequence[Fused]) -> list[Fused]:
    """The chosen in order of how plainly each answers the query (gate relevance; score on ties), not by type or date,
    each preceded by what it carries (the successor of an old value, a later memory amending it): what holds now
    comes before what it changed, and a budget cutting from the end never leaves an old value without it."""
    pooled = {e.key: e for e in chosen}
    placed: set[Key] = set()
    out: list[Fused] = []

    def place(entry: Fused) -> None:
        if entry.key in placed:
            return
        placed.add(entry.key)
        for key in entry.carries:
            if key in pooled:
                place(pooled[key])
        out.append(entry)

    for entry in sorted(chosen, key=lambda e: (-relevance(e), -e.score)):
        place(entry)
    return out


def relevance(entry: Fused) -> float:
    return entry.signals.get("relevance", 0.0)


def adding(ordered: Sequence[Fused], texts: Mapping[Key, str]) -> list[Fused]:
    """The lines of `ordered` (best answer first) that add something to those above: a line none of whose words is
    new is left out, unless a kept line carries it (the successor of an old value stays with it).

    Lines are not cut by how far their relevance falls below the first line's: measured on every set, each such cut
    tried (at the midpoint of the first line's and the gate floor's log-odds, a third of the way up from the floor,
    or a fixed odds ratio below the first) lost 15-36% of the conversational (LoCoMo) questions whose block held an
    answer, as the gate scores a chat's lines near its floor whether they answer or not."""
    kept: list[Fused] = []
    above: list[Words] = []
    needed = {key for e in ordered for key in e.carries}
    for entry in ordered:
        words = words_of(texts.get(entry.key, ""))
        if entry.key not in needed and covered(words, above):
            entry.signals["covered"] = 1.0
            continue
        kept.append(entry)
        above.append(words)
    return kept
