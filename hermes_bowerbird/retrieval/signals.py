"""The retrieval signals, one registry entry each: its name, what it searches, how it finds candidates, its weight.

Adding a signal is one `SignalSpec` in `SIGNALS` (plus its test): the retriever runs every entry of the registry
it was given and fusion weighs each signal's ranks by the entry's weight.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..config import RetrievalWeights
from ..embeddings.tier import VectorTier
from ..store import Store
from ..types import ItemKind
from . import candidates as cand
from .candidates import Ranked, Signal
from .query import QueryAnalysis

VECTOR_UNAVAILABLE = "vector index not ready"


class Stage(enum.Enum):
    """What a signal starts from, which is when the retriever can run it."""

    QUERY = "query"  # the query's words, names and subjects
    VECTOR = "vector"  # the query's embedding (skipped, with a note, when no model is ready)
    EXPANSION = "expansion"  # the best memories the other signals found (their ids and shares of the best score)


class Match(enum.Enum):
    """What a signal's candidates share with the query: its words, its meaning, or something else (links)."""

    WORDS = "words"
    MEANING = "meaning"
    OTHER = "other"


@dataclass(frozen=True)
class SignalInput:
    """Everything a signal may search with; `allowed` holds the ids of each kind searched that the request's scopes
    hold, read once per search (a vector signal on another thread would otherwise wait for the connection)."""

    store: Store
    vectors: VectorTier
    analysis: QueryAnalysis
    scopes: tuple[str, ...]
    query_vector: np.ndarray | None = None
    allowed: Mapping[ItemKind, frozenset[int]] = field(default_factory=dict)
    seeds: Mapping[int, float] = field(default_factory=dict)
    weights: RetrievalWeights = field(default_factory=RetrievalWeights)


@dataclass(frozen=True)
class SignalSpec:
    """One retrieval signal: its name (as `explain` shows it), the kind of item it ranks, the stage it runs at,
    how it finds candidates, and its fusion weight read from the configured weights."""

    name: str
    searches: ItemKind
    stage: Stage
    find: Callable[[SignalInput], Ranked]
    weight: Callable[[RetrievalWeights], float]
    matches: Match = Match.OTHER

    def run(self, given: SignalInput) -> Signal:
        if self.stage is Stage.VECTOR and given.query_vector is None:
            return Signal(self.name, self.searches, (), note=VECTOR_UNAVAILABLE)
        return Signal(self.name, self.searches, self.find(given))


def _full_text(kind: ItemKind) -> Callable[[SignalInput], Ranked]:
    return lambda given: cand.full_text(
        given.store, given.analysis, given.scopes, kind, len(given.allowed.get(kind, ()))
    )


def _nearest(kind: ItemKind) -> Callable[[SignalInput], Ranked]:
    def find(given: SignalInput) -> Ranked:
        assert given.query_vector is not None  # SignalSpec.run skips vector signals without one
        return cand.nearest(
            given.vectors,
            given.query_vector,
            kind,
            given.allowed.get(kind, frozenset()),
            given.scopes,
        )

    return find


def _asked_questions(given: SignalInput) -> Ranked:
    assert given.query_vector is not None  # SignalSpec.run skips vector signals without one
    return cand.asked_questions(
        given.store,
        given.vectors,
        given.query_vector,
        given.allowed.get(ItemKind.QUESTION, frozenset()),
        given.scopes,
        given.weights.question_floor,
    )


def _entity_links(kind: ItemKind) -> Callable[[SignalInput], Ranked]:
    return lambda given: cand.entity_links(given.store, given.analysis, given.scopes, kind)


MEMORY, EPISODE = ItemKind.MEMORY, ItemKind.EPISODE

# The order is the order signals are fused in (it decides nothing but floating-point summation order).
SIGNALS: tuple[SignalSpec, ...] = (
    SignalSpec(
        "fts_memory", MEMORY, Stage.QUERY, _full_text(MEMORY), lambda w: w.fts_memory, Match.WORDS
    ),
    SignalSpec(
        "fts_episode",
        EPISODE,
        Stage.QUERY,
        _full_text(EPISODE),
        lambda w: w.fts_episode,
        Match.WORDS,
    ),
    SignalSpec("graph_entity", MEMORY, Stage.QUERY, _entity_links(MEMORY), lambda w: w.graph),
    SignalSpec(
        "graph_entity_episode", EPISODE, Stage.QUERY, _entity_links(EPISODE), lambda w: w.graph
    ),
    SignalSpec(
        "subject",
        MEMORY,
        Stage.QUERY,
        lambda given: cand.subject_slots(given.store, given.analysis, given.scopes),
        lambda w: w.subject,
    ),
    SignalSpec(
        "vector_memory",
        MEMORY,
        Stage.VECTOR,
        _nearest(MEMORY),
        lambda w: w.vector_memory,
        Match.MEANING,
    ),
    SignalSpec(
        "vector_episode",
        EPISODE,
        Stage.VECTOR,
        _nearest(EPISODE),
        lambda w: w.vector_episode,
        Match.MEANING,
    ),
    # the questions stored with each memory (curation/questions.py), matched to the query: a question asked in other
    # words than the statement that answers it is still near the questions that statement answers
    SignalSpec(
        "question", MEMORY, Stage.VECTOR, _asked_questions, lambda w: w.question, Match.MEANING
    ),
    SignalSpec(
        "graph_edge",
        MEMORY,
        Stage.EXPANSION,
        lambda given: cand.typed_edges(given.store, given.seeds),
        lambda w: w.graph,
    ),
)


def fusion_weights(specs: Iterable[SignalSpec], weights: RetrievalWeights) -> dict[str, float]:
    """Each signal's fusion weight by name."""
    return {spec.name: spec.weight(weights) for spec in specs}


def lean_on_meaning(
    specs: Iterable[SignalSpec],
    weights: Mapping[str, float],
    evidence: float,
    lean: float,
    enough: float = 1.0,
) -> dict[str, float]:
    """The weights with every meaning signal's multiplied by 1 + lean x max(0, 1 - evidence / enough), where evidence
    (0..1) is how much of the query the best keyword matches hold: a question in other words than the store's
    leans on meaning, one whose keywords are found (`enough` of them) does not."""
    factor = 1.0 + lean * max(0.0, 1.0 - max(0.0, evidence) / enough)
    meaning = {spec.name for spec in specs if spec.matches is Match.MEANING}
    return {
        name: weight * factor if name in meaning else weight for name, weight in weights.items()
    }


def run_stage(
    specs: Iterable[SignalSpec], stage: Stage, given: SignalInput, kinds: Iterable[ItemKind]
) -> list[Signal]:
    """The signals of one stage that search one of `kinds`, in registry order."""
    wanted = set(kinds)
    return [spec.run(given) for spec in specs if spec.stage is stage and spec.searches in wanted]
