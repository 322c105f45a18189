"""Retriever: the one hybrid search behind prefetch, the tools, the CLI and MCP."""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar, overload

import numpy as np

from ..config import Config, RetrievalWeights
from ..curation.changes import tells_of_someone_moving_on, who_moved_on
from ..curation.given_up import amends, given_up_names
from ..curation.provenance import USER, origin_of
from ..embeddings.tier import VectorTier
from ..store import Store
from ..text import holds_name
from ..types import Clock, Episode, ItemKind, Memory, Provenance
from . import candidates as cand
from . import gate, injection
from .asked_value import asked_value, lacks
from .budget import fit_to_budget
from .candidates import Signal
from .fusion import (
    Fused,
    Key,
    KeywordCoverage,
    current_head,
    demote_stale_episodes,
    demote_superseded,
    keyword_evidence,
    make_similarity,
    mmr,
    rescore,
    session_prior,
    spread_to_neighbours,
    weighted_rrf,
)
from .query import QueryAnalysis, analyze_query
from .rerank import TermStats, cross_rerank, rerank
from .results import Hit, RecallRequest, item_key
from .scoring import effective_importance
from .signals import (
    SIGNALS,
    Match,
    SignalInput,
    SignalSpec,
    Stage,
    fusion_weights,
    lean_on_meaning,
    run_stage,
)
from .tuning import (
    AMENDMENT_POOL,
    COVERAGE_WORDS,
    EDGE_SEEDS,
    EVIDENCE_TOP,
    MAX_LIMIT,
    MIN_MMR_POOL,
    MMR_POOL_FACTOR,
    PARALLEL_FROM_ITEMS,
    RELEVANCE_POOL,
    RERANK_POOL,
    RERANK_TIME_SHARE,
    SUCCESSOR_HOPS,
)

if TYPE_CHECKING:
    from .cross_encoder import CrossEncoderReranker

log = logging.getLogger(__name__)
T = TypeVar("T")
# the signals that reach items through the entities a query names
LINK_SIGNALS = frozenset({"graph_entity", "graph_entity_episode"})


@dataclass
class _Items:
    """Hydrated candidates of one search, filtered to what the request may see."""

    memories: dict[int, Memory] = field(default_factory=dict)
    episodes: dict[int, Episode] = field(default_factory=dict)
    # of the reranked pool, for relevance and MMR
    vectors: dict[Key, np.ndarray] = field(default_factory=dict)
    # every vector read in this search (None: the item has none), the pool's and those read ahead of the rerank
    read: dict[Key, np.ndarray | None] = field(default_factory=dict)
    # episode -> the memories it stated; and of the episodes that stated only superseded memories, those memories
    stated: dict[int, list[int]] = field(default_factory=dict)
    stale_episodes: dict[int, list[int]] = field(default_factory=dict)
    # of the MMR pool's memories, loaded once
    provenance: dict[int, list[Provenance]] = field(default_factory=dict)

    def get(self, key: Key) -> Memory | Episode | None:
        return self.memories.get(key[1]) if key[0] is ItemKind.MEMORY else self.episodes.get(key[1])


@dataclass(frozen=True)
class _Reading:
    """How the gate reads an item for one query: the logistic of its cosine (read against the query's `base`) and
    keyword coverage (`gate.relevance`), reaching `floor` to pass.

    The cosine is read against `gate_vector` when the query's names were put after roles (see
    `Retriever._gate_vector`), and a question said after something else counts the better of its readings whole and
    `alone`. A memory filling a profile slot the question names (the subject signal found it) is scored like the
    rest, with the keyword coverage the rerank credited it with (`slot_coverage`)."""

    analysis: QueryAnalysis
    base: gate.Baseline | None
    floor: float
    weights: RetrievalWeights
    gate_vector: np.ndarray | None = None
    alone: tuple[np.ndarray, gate.Baseline | None] | None = None
    # the weight of the cross-encoder's reading in the gate (config `reranker_gate_weight`; 0: not read)
    cross_weight: float = 0.0

    @functools.cached_property
    def asked(self) -> re.Pattern[str] | None:
        """The kind of value the question asks for, if it names one (`asked_value`)."""
        return asked_value(self.analysis.text)

    def passes(
        self,
        text: str,
        vector: np.ndarray | None,
        cosine: float | None,
        coverage: float,
        signals: dict[str, float],
    ) -> bool:
        """Whether the item answers plainly enough, recording its relevance and the gate's readings in `signals`."""
        value = self.value(text, vector, cosine, coverage, signals)
        if value >= self.floor and lacks(self.asked, text):
            # "how much did I pay for my car?": "I drive a Golf" is a near miss, however close
            signals["lacks_asked_value"] = 1.0
            return False
        return value >= self.floor

    def value(
        self,
        text: str,
        vector: np.ndarray | None,
        cosine: float | None,
        coverage: float,
        signals: dict[str, float],
    ) -> float:
        analysis, base, weights = self.analysis, self.base, self.weights
        # a question in another language is judged by its keywords: the English model's cosine says little
        cosine = None if analysis.foreign else cosine
        if self.gate_vector is not None and cosine is not None and vector is not None:
            cosine = float(np.dot(vector, self.gate_vector))
            signals["gate_cosine"] = cosine
        # the closest of a memory's stored questions (a question in another language is not compared)
        question = None if analysis.foreign else signals.get("question")
        # the cross-encoder's reading of the item, when it read it and the gate weighs it
        p = signals.get("cross")
        cross = None if p is None or self.cross_weight <= 0 else (p, self.cross_weight)
        value = gate.relevance(cosine, coverage, base, weights, question, cross)
        if self.alone is not None and cosine is not None and vector is not None:
            alone_cosine = float(np.dot(vector, self.alone[0]))
            value = max(
                value,
                gate.relevance(alone_cosine, coverage, self.alone[1], weights, question, cross),
            )
        if analysis.names_asked and _names_holder(text, analysis):
            # "who is my boss?": what says who holds the role answers it, however little it shares with the
            # question's words or meaning
            signals["names_holder"] = 1.0
            value = max(value, self.floor)
        signals["relevance"] = value
        if base is not None and cosine is not None:
            signals["gate_z"] = base.z(cosine)
            signals["gate_chance"] = base.chance_max
        return value


class Retriever:
    """Query analysis -> candidates from every signal of the registry (retrieval/signals.py) -> weighted RRF ->
    rescoring -> rerank of the best by the items themselves -> MMR -> budget.

    On a large store (PARALLEL_FROM_ITEMS) the query embedding and the vector search run on a small owned thread
    pool while the full-text and graph queries run on the caller's thread (`parallel=False`: never). On a small
    one the hand-off costs more than it saves.
    """

    def __init__(
        self,
        store: Store,
        vectors: VectorTier,
        config: Config,
        clock: Clock,
        *,
        parallel: bool = True,
        signals: Sequence[SignalSpec] = SIGNALS,
        reranker: CrossEncoderReranker | None = None,
    ) -> None:
        """`reranker`: the optional cross-encoder, run on the best candidates when it fits the time left."""
        self.store = store
        self.reranker = reranker
        self.signals = tuple(signals)
        self.vectors = vectors
        self.config = config
        self.clock = clock
        self._pool = (
            ThreadPoolExecutor(2, thread_name_prefix="bowerbird-recall") if parallel else None
        )
        self._scope_ids = cand.ScopeIdCache(store)
        self._entities = cand.EntityNormCache(store)
        self._subjects = cand.SubjectKeyCache(store, self._scope_ids)
        self._terms = TermStats(store)
        self._sample: gate.StoreSample[Key] = gate.StoreSample(self._sample_vectors)
        self._self_names: tuple[Mapping[str, int], frozenset[int], frozenset[str]] | None = None
        self._other_norms: tuple[Mapping[str, int], frozenset[str], Mapping[str, int]] | None = None

    def close(self) -> None:
        """Stop the worker threads (waits for a running search's vector step)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def analyze(
        self, query: str, scopes: Sequence[str], memory_ids: frozenset[int] | None = None
    ) -> QueryAnalysis:
        """`memory_ids`: the scopes' memory ids, when the caller has just read them."""
        norms, aliases = self._entities.load(scopes)
        names = self.self_names(scopes, norms)
        return analyze_query(
            query,
            self.clock(),
            self._without(norms, names),
            self_names=names,
            known_subjects=self._subjects.keys(scopes, memory_ids),
            alias_names=aliases,
        )

    def _without(self, norms: Mapping[str, int], names: set[str]) -> Mapping[str, int]:
        """The entity names other than the user's own, copied once per (names, entities) state, not per query."""
        if not names:
            return norms
        cached = self._other_norms
        if cached is not None and cached[0] is norms and cached[1] == names:
            return cached[2]
        others = {n: i for n, i in norms.items() if n not in names}
        self._other_norms = (norms, frozenset(names), others)
        return others

    def self_names(self, scopes: Sequence[str], norms: Mapping[str, int]) -> set[str]:
        """Normalised names (and aliases) of the entities the user's own name memories (subject user:name) link."""
        ids = self.store.memories.by_subject(scopes, ("user:name",), 5)
        if not ids:
            return set()
        linked = frozenset(
            e
            for entity_ids in self.store.graph.entities_of_memories(ids).values()
            for e in entity_ids
        )
        cached = self._self_names
        if cached is not None and cached[0] is norms and cached[1] == linked:
            return set(cached[2])
        names = frozenset(norm for norm, entity_id in norms.items() if entity_id in linked)
        # norms is the cache's dict until an entity is added
        self._self_names = (norms, linked, names)
        return set(names)

    # -- the search -------------------------------------------------------------------------------------------
    def search(self, request: RecallRequest, *, touch: bool = True) -> list[Hit]:
        """Ranked hits for the request; touches returned memories (access boost) unless `touch=False`."""
        with (
            self.store.reading()
        ):  # one connection for the search's many small reads, where there are several
            return self._search(request, touch=touch)

    def _search(self, request: RecallRequest, *, touch: bool) -> list[Hit]:
        scopes = tuple(dict.fromkeys(request.scopes))
        if not scopes or not request.query.strip() or request.limit <= 0:
            return []
        now = self.clock()
        deadline = time.monotonic() + self.config.prefetch_timeout_seconds * RERANK_TIME_SHARE
        # read once for the whole search (the analysis needs them too)
        memory_ids = self._scope_ids.allowed(ItemKind.MEMORY, scopes)
        analysis = self.analyze(request.query, scopes, memory_ids)
        kinds = kinds_of(episodes_on(request))
        embedding = self._embed_beside(analysis, scopes, kinds)
        given = SignalInput(
            self.store,
            self.vectors,
            analysis,
            scopes,
            allowed={
                kind: memory_ids
                if kind is ItemKind.MEMORY
                else self._scope_ids.allowed(kind, scopes)
                for kind in _searched(kinds)
            },
            weights=self.config.weights,
        )
        items = _Items()

        def meanwhile(found: list[Signal], waiting: Callable[[], bool]) -> KeywordCoverage:
            # while the vector stage runs: load what the keyword and graph signals found, weigh the query's words
            # and how much of them each of those items holds, and, if it has not finished by then, read their
            # vectors, which the rerank would otherwise read after it
            self._hydrate([(s.kind, i) for s in found for i, _ in s.ranked], request, scopes, items)
            coverage = self._coverage(analysis)
            coverage.learn(
                [m.content for m in items.memories.values()]
                + [e.content for e in items.episodes.values()]
            )
            if waiting():
                _read_vectors(
                    self.vectors,
                    items,
                    [(ItemKind.MEMORY, i) for i in items.memories]
                    + [(ItemKind.EPISODE, i) for i in items.episodes],
                )
            return coverage

        signals, vector_note, given, coverage = self._collect(given, kinds, meanwhile, embedding)
        query_vector = given.query_vector
        weights = fusion_weights(self.signals, self.config.weights)
        fused = weighted_rrf(signals, weights, self.config.weights.rrf_k)
        items = self._hydrate(fused, request, scopes, items)
        if self.config.weights.meaning_lean > 0:
            weights = self._lean(signals, weights, items, coverage)
            fused = weighted_rrf(signals, weights, self.config.weights.rrf_k)
        fused = self._expand(fused, items, signals, weights, request, given)
        limit = min(request.limit, MAX_LIMIT)
        pool = max(
            RERANK_POOL, RELEVANCE_POOL if request.min_relevance > 0 else 0, limit * MMR_POOL_FACTOR
        )
        ranked = self._rank(fused, items, analysis, (query_vector, coverage), now, (pool, deadline))
        if request.min_relevance > 0:
            gate_vector = self._gate_vector(analysis, query_vector)
            reading = _Reading(
                analysis,
                self._baseline(scopes, given.allowed, gate_vector),
                request.min_relevance,
                self.config.weights,
                None if gate_vector is query_vector else gate_vector,
                self._asked_alone(analysis, scopes, given.allowed, query_vector),
                self.config.reranker_gate_weight,
            )
            ranked = self._relevant(ranked, items, reading)
            if request.inject:
                ranked = self._worth_injecting(
                    ranked, items, request, (reading, query_vector, coverage)
                )
        chosen = _with_carried(self._diversify(ranked, items, limit), ranked)
        if request.inject:
            chosen = injection.adding(
                injection.best_answer_first(chosen),
                {e.key: _content(items.get(e.key)) for e in chosen},
            )
        missing = [
            e.key[1]
            for e in chosen
            if e.key[0] is ItemKind.MEMORY and e.key[1] not in items.provenance
        ]
        if missing:  # a pool of one skips MMR and so never loaded provenance
            items.provenance.update(self.store.provenance.of(missing))
        hits = self._to_hits(chosen, items, request.explain, vector_note)
        hits = fit_to_budget(hits, request.budget_tokens)
        if touch:
            self.store.memories.touch([h.id for h in hits if h.kind is ItemKind.MEMORY])
        return hits

    def _embed_beside(
        self, analysis: QueryAnalysis, scopes: tuple[str, ...], kinds: list[ItemKind]
    ) -> Future[np.ndarray | None] | None:
        """The query's embedding, started on the pool as soon as the query is read, when the scopes were large the
        last time their ids were read (PARALLEL_FROM_ITEMS): it then runs beside the reading of the scopes' ids and
        the query stage. None (embedded in turn by the vector stage) on a small store or without a pool."""
        if self._pool is None or not self.vectors.ready():
            return None
        if sum(self._scope_ids.known(kind, scopes) for kind in kinds) < PARALLEL_FROM_ITEMS:
            return None
        return self._pool.submit(self._embed, analysis)

    def _embed(self, analysis: QueryAnalysis) -> np.ndarray | None:
        return self.vectors.embed_query(analysis.semantic_text or analysis.text)

    def _collect(
        self,
        given: SignalInput,
        kinds: list[ItemKind],
        meanwhile: Callable[[list[Signal], Callable[[], bool]], T],
        embedding: Future[np.ndarray | None] | None,
    ) -> tuple[list[Signal], str, SignalInput, T]:
        """The query and vector stages' signals, a note when vectors were unavailable, the input with the query
        vector (None without a model), and what `meanwhile` made of the signals found before the vector stage is
        waited for: the query stage's while it runs beside them (the query's `embedding` begun: a large store),
        else all of them at the end."""
        if embedding is None or self._pool is None:
            signals = run_stage(self.signals, Stage.QUERY, given, kinds)
            vector, given = self._vector_signals(given, kinds, None)
            made = meanwhile(signals + vector, lambda: False)
        else:
            # the embedding was submitted first, so this never waits for a job queued behind it
            future = self._pool.submit(self._vector_signals, given, kinds, embedding)
            signals = run_stage(self.signals, Stage.QUERY, given, kinds)
            made = meanwhile(signals, lambda: not future.done())
            vector, given = future.result()
        notes = {s.note for s in vector if s.note}
        return signals + vector, "; ".join(sorted(notes)), given, made

    def _vector_signals(
        self,
        given: SignalInput,
        kinds: list[ItemKind],
        embedding: Future[np.ndarray | None] | None,
    ) -> tuple[list[Signal], SignalInput]:
        if embedding is not None:
            vector = embedding.result()
        else:
            vector = self._embed(given.analysis) if self.vectors.ready() else None
        given = replace(given, query_vector=vector)
        return run_stage(self.signals, Stage.VECTOR, given, kinds), given

    def _gate_vector(
        self, analysis: QueryAnalysis, query_vector: np.ndarray | None
    ) -> np.ndarray | None:
        """The query vector the gate reads. With names put after the user's roles for them, the name draws the
        query toward everything said of that person, the answer and the near miss alike ("my daughter's
        favourite colour" -> "my daughter's name is Clementine"), so the gate reads a vector between the query
        with names and without (`weights.gate_role_names`: 1 = with, 0 = without)."""
        share = self.config.weights.gate_role_names
        if query_vector is None or not analysis.unnamed_text or share >= 1.0:
            return query_vector
        unnamed = self.vectors.embed_query(analysis.unnamed_text)
        if unnamed is None:
            return query_vector
        blend = (1.0 - share) * unnamed + share * query_vector
        return blend / max(float(np.linalg.norm(blend)), 1e-12)

    def _asked_alone(
        self,
        analysis: QueryAnalysis,
        scopes: tuple[str, ...],
        allowed: Mapping[ItemKind, frozenset[int]],
        query_vector: np.ndarray | None,
    ) -> tuple[np.ndarray, gate.Baseline | None] | None:
        """The question said after something else, alone, and its baseline: the gate reads it beside the whole text,
        whose first sentences pull its meaning away from what it asks ("I'm sorting things out this afternoon. What
        is my little girl called?")."""
        if not analysis.asked_alone or query_vector is None:
            return None
        vector = self.vectors.embed_query(analysis.asked_alone)
        return None if vector is None else (vector, self._baseline(scopes, allowed, vector))

    def _relevant(self, ranked: list[Fused], items: _Items, reading: _Reading) -> list[Fused]:
        """The candidates whose gate relevance (see `_Reading`) reaches the floor; recorded as a signal.

        A stale item that passes (a superseded memory, or a turn that stated only superseded facts) carries the
        current successors in the pool through with it: "I work at Deloitte" may answer "where do I work?" more
        plainly than "I started a new job at KPMG", and is never given without it. So does a memory that holds only
        in part (or a turn that stated one), with what amended it, and is marked amended by it: "I take metformin
        and atorvastatin" with "The doctor switched my atorvastatin to rosuvastatin", and one naming someone, with
        the news that they moved or started somewhere new.
        """
        kept: set[Key] = set()
        for entry in ranked[:RELEVANCE_POOL]:
            if reading.passes(
                _content(items.get(entry.key)),
                items.vectors.get(entry.key),
                entry.signals.get("cosine"),
                entry.signals.get("coverage", 0.0),
                entry.signals,
            ):
                kept.add(entry.key)
        pooled = {e.key: e for e in ranked}
        for key in [k for k in kept if pooled[k].signals.get("superseded")]:
            stated = (
                items.stale_episodes.get(key[1], []) if key[0] is ItemKind.EPISODE else [key[1]]
            )
            for memory_id in stated:
                head = current_head(memory_id, items.memories)
                successor = pooled.get((ItemKind.MEMORY, head)) if head is not None else None
                if successor is not None and successor.key not in pooled[key].carries:
                    pooled[key].carries.append(successor.key)
                if successor is not None and successor.key not in kept:
                    successor.signals["carried"] = 1.0
                    kept.add(successor.key)
        news = _news(ranked[:AMENDMENT_POOL], items) if kept else []
        for key in list(kept) if news else []:
            stated = [key[1]] if key[0] is ItemKind.MEMORY else items.stated.get(key[1], [])
            for memory_id in stated:
                for amendment in _amendments(items.memories.get(memory_id), news):
                    if amendment.key[1] not in pooled[key].amended_by:
                        pooled[key].amended_by.append(amendment.key[1])
                        pooled[key].carries.append(amendment.key)
                    if amendment.key not in kept:
                        amendment.signals["carried"] = 1.0
                        kept.add(amendment.key)
        return [e for e in ranked if e.key in kept]

    def _worth_injecting(
        self,
        kept: list[Fused],
        items: _Items,
        request: RecallRequest,
        query: tuple[_Reading, np.ndarray | None, KeywordCoverage],
    ) -> list[Fused]:
        """What passed the gate less the turns not worth injecting unasked (retrieval/injection.py): a message that
        only asks, and one with a memory taken from it that answers the query and that the caller holds already
        (`request.exclude_ids`: given earlier in the session, or in its context) or that passed here. A memory that
        passed stands in for its turn, at the better of their scores."""
        episodes = [items.episodes[i] for k, i in (e.key for e in kept) if k is ItemKind.EPISODE]
        if not episodes:
            return kept
        stated = self.store.provenance.memories_from_episodes([e.id for e in episodes])
        memories = self.store.memories.get_many(sorted({m for ids in stated.values() for m in ids}))
        told = {
            e.id: [
                memories[m]
                for m in stated.get(e.id, [])
                if m in memories and injection.said_on(memories[m], e.role)
            ]
            for e in episodes
        }
        held = {
            m.id: m
            for ms in told.values()
            for m in ms
            if item_key(ItemKind.MEMORY, m.id) in request.exclude_ids
        }
        answering = self._answering(held.values(), *query)
        pooled = {e.key: e for e in kept}
        dropped: set[Key] = set()
        for episode in episodes:
            entry = pooled[(ItemKind.EPISODE, episode.id)]
            passed = [
                pooled[k] for m in told[episode.id] if (k := (ItemKind.MEMORY, m.id)) in pooled
            ]
            if injection.asks_only(episode, told[episode.id]):
                entry.signals["asks_only"] = 1.0
            elif passed or any(m.id in answering for m in told[episode.id]):
                entry.signals["restated"] = 1.0
                for memory in passed:
                    memory.score = max(memory.score, entry.score)
            else:
                continue
            dropped.add(entry.key)
        return sorted((e for e in kept if e.key not in dropped), key=_order)

    def _answering(
        self,
        memories: Iterable[Memory],
        reading: _Reading,
        query_vector: np.ndarray | None,
        coverage: KeywordCoverage,
    ) -> set[int]:
        """Ids of these memories (held by the caller, so not searched) that pass the gate for this query, read as the
        rerank and the gate read a candidate."""
        by_id = {m.id: m for m in memories}
        if not by_id:
            return set()
        vectors = self.vectors.vectors(ItemKind.MEMORY, list(by_id)) if self.vectors.ready() else {}
        out: set[int] = set()
        for memory in by_id.values():
            vector = vectors.get(memory.id)
            cosine = None
            if vector is not None and query_vector is not None:
                cosine = float(np.dot(vector, query_vector))
            share = coverage(memory.content)
            if memory.subject and memory.subject in reading.analysis.subjects:
                share = max(share, self.config.weights.slot_coverage)
            if reading.passes(memory.content, vector, cosine, share, {}):
                out.add(memory.id)
        return out

    def _baseline(
        self,
        scopes: tuple[str, ...],
        allowed: Mapping[ItemKind, frozenset[int]],
        query_vector: np.ndarray | None,
    ) -> gate.Baseline | None:
        """The query's typical similarity to what these scopes hold of the kinds searched (None without a query
        vector)."""
        if query_vector is None:
            return None
        ids = _ScopeKeys([(k, ids) for k, ids in allowed.items() if k is not ItemKind.QUESTION])
        sample = self._sample.get(
            (*scopes, *(str(k) for k in allowed if k is not ItemKind.QUESTION)), ids
        )
        return gate.baseline(sample, query_vector, len(ids))

    def _sample_vectors(self, keys: Sequence[Key]) -> np.ndarray:
        rows: list[np.ndarray] = []
        for kind in (ItemKind.MEMORY, ItemKind.EPISODE):
            found = self.vectors.vectors(kind, [i for k, i in keys if k is kind])
            rows += found.values()
        return np.stack(rows) if rows else np.empty((0, 0), np.float32)

    def _hydrate(
        self,
        fused: Iterable[Key],
        request: RecallRequest,
        scopes: tuple[str, ...],
        items: _Items | None = None,
    ) -> _Items:
        """Load candidates not yet loaded, keeping only those the request may see."""
        items = items or _Items()
        memory_ids = [i for k, i in fused if k is ItemKind.MEMORY and i not in items.memories]
        episode_ids = [i for k, i in fused if k is ItemKind.EPISODE and i not in items.episodes]
        # what is held in quarantine is never recalled until released
        for memory in self.store.memories.get_many(memory_ids, released=True).values():
            if _visible_memory(memory, request, scopes):
                items.memories[memory.id] = memory
        for episode in self.store.episodes.get_many(episode_ids, released=True).values():
            if _visible_episode(episode, request, scopes):
                items.episodes[episode.id] = episode
        return items

    def _expand(
        self,
        fused: dict[Key, Fused],
        items: _Items,
        signals: list[Signal],
        weights: dict[str, float],
        request: RecallRequest,
        given: SignalInput,
    ) -> dict[Key, Fused]:
        """Add what the expansion signals reach from the best memories (typed edges), and successors of superseded
        ones.

        For questions about the user or about the present ("where do I live now", "how many guests are coming?"),
        episodes that stated only superseded facts bring those facts (and so their successors) along and are
        demoted with them.
        """
        scopes, analysis = given.scopes, given.analysis
        best = sorted(
            (e for e in fused.values() if e.key[0] is ItemKind.MEMORY and items.get(e.key)),
            key=lambda e: -e.score,
        )[:EDGE_SEEDS]
        if best:
            top = best[0].score or 1.0
            seeds = replace(given, seeds={e.key[1]: e.score / top for e in best})
            reached = [
                s
                for s in run_stage(
                    self.signals, Stage.EXPANSION, seeds, kinds_of(episodes_on(request))
                )
                if s.ranked
            ]
            if reached:
                fused = weighted_rrf([*signals, *reached], weights, self.config.weights.rrf_k)
        if analysis.about_user or analysis.recency > 0 or analysis.present:
            self._add_stated(fused, items, request, scopes)
        self._add_successors(fused, items, request, scopes)
        self._hydrate(fused, request, scopes, items)
        return {k: e for k, e in fused.items() if items.get(k) is not None}

    def _add_stated(
        self,
        fused: dict[Key, Fused],
        items: _Items,
        request: RecallRequest,
        scopes: tuple[str, ...],
    ) -> None:
        """Episodes whose turn only yielded superseded memories are stale: those memories join at the episode's
        score (so their current successors follow), and the episodes are remembered for demotion."""
        sources = self.store.provenance.memories_from_episodes(
            [i for k, i in fused if k is ItemKind.EPISODE]
        )
        if not sources:
            return
        items.stated = {e: list(ids) for e, ids in sources.items()}
        stale = self.store.memories.stale_ids(
            {m for ids in sources.values() for m in ids}, self.clock()
        )
        for episode_id, stated in sources.items():
            if not stated or not stale.issuperset(stated):
                continue
            items.stale_episodes[episode_id] = list(stated)
            score = fused[(ItemKind.EPISODE, episode_id)].score
            for memory_id in stated:
                key = (ItemKind.MEMORY, memory_id)
                entry = fused.setdefault(
                    key, Fused(key, 0.0, {"stated_in_episode": float(episode_id)})
                )
                entry.score = max(entry.score, score)

    def _add_successors(
        self,
        fused: dict[Key, Fused],
        items: _Items,
        request: RecallRequest,
        scopes: tuple[str, ...],
    ) -> None:
        """A stale memory that matched brings its current successor along, at the stale one's fused score."""
        for _ in range(SUCCESSOR_HOPS):
            self._hydrate(fused, request, scopes, items)
            pending = [
                m
                for m in items.memories.values()
                if m.superseded_by is not None and (ItemKind.MEMORY, m.superseded_by) not in fused
            ]
            if not pending:
                return
            for memory in pending:
                source = fused.get((ItemKind.MEMORY, memory.id))
                key = (ItemKind.MEMORY, int(memory.superseded_by or 0))
                fused[key] = Fused(
                    key, source.score if source else 0.0, {"successor_of": float(memory.id)}
                )

    def _rank(
        self,
        fused: dict[Key, Fused],
        items: _Items,
        analysis: QueryAnalysis,
        query: tuple[np.ndarray | None, KeywordCoverage],
        now: float,
        pool: tuple[int, float],
    ) -> list[Fused]:
        """Fused scores -> session and neighbour lifts -> importance, type and time -> the best (`pool`: how many,
        and the monotonic time the cross-encoder must be done by) are reranked by the items themselves, then the
        best few by the cross-encoder when there is one and it fits -> superseded items demoted below their
        successors."""
        pool_size, deadline = pool
        weights = self.config.weights
        session_prior(fused, items.episodes, weights.session)
        spread_to_neighbours(fused, items.episodes, weights.neighbour_prev, weights.neighbour_next)
        for key, entry in fused.items():
            item = items.get(key)
            assert item is not None
            importance = (
                effective_importance(item, now, self.config)
                if isinstance(item, Memory)
                else weights.episode_importance
            )
            rescore(entry, item, analysis, now, weights, importance)
        best = sorted(fused.values(), key=_order)[:pool_size]
        self._rerank(best, items, *query, _named_by_link(best, analysis))
        self._cross_rerank(best, items, analysis.text, deadline)
        kept = {e.key: e for e in best}
        demote_superseded(kept, items.memories, now, weights.superseded_penalty)
        demote_stale_episodes(
            kept, items.stale_episodes, items.memories, weights.superseded_penalty
        )
        return sorted(best, key=_order)

    def _cross_rerank(self, pool: list[Fused], items: _Items, query: str, deadline: float) -> None:
        """The cross-encoder's reading of the best `reranker_candidates` of the pool, when it is ready and fits
        before `deadline`; else the pool stays as it is."""
        reranker = self.reranker
        if reranker is None:
            return
        top = sorted(pool, key=_order)[: self.config.reranker_candidates]
        found = reranker.score(query, [_content(items.get(e.key)) for e in top], deadline)
        if found is not None:
            cross_rerank(top, found, self.config.reranker_weight)

    def _coverage(self, analysis: QueryAnalysis) -> KeywordCoverage:
        words = analysis.keywords[:COVERAGE_WORDS]
        return KeywordCoverage(words, self._terms.idf(set(words)))

    def _lean(
        self,
        signals: list[Signal],
        weights: dict[str, float],
        items: _Items,
        coverage: KeywordCoverage,
    ) -> dict[str, float]:
        """Weights leaning on meaning as far as the best keyword matches fail to hold the query's keywords."""
        words = {spec.name for spec in self.signals if spec.matches is Match.WORDS}
        evidence = keyword_evidence(
            signals, words, lambda key: _text(items.get(key)), coverage, EVIDENCE_TOP
        )
        return lean_on_meaning(
            self.signals,
            weights,
            evidence,
            self.config.weights.meaning_lean,
            self.config.weights.meaning_enough,
        )

    def _rerank(
        self,
        pool: list[Fused],
        items: _Items,
        query_vector: np.ndarray | None,
        coverage: KeywordCoverage,
        named: Mapping[Key, str],
    ) -> None:
        _read_vectors(self.vectors, items, [e.key for e in pool])
        items.vectors.update(
            (e.key, vector) for e in pool if (vector := items.read.get(e.key)) is not None
        )
        cosines = (
            {}
            if query_vector is None
            else {key: float(np.dot(vector, query_vector)) for key, vector in items.vectors.items()}
        )
        texts = {e.key: _content(items.get(e.key)) for e in pool}
        rerank(
            pool,
            coverage_of=coverage,
            texts=texts,
            cosines=cosines,
            weights=self.config.weights,
            named=named,
        )

    def _diversify(self, ranked: list[Fused], items: _Items, limit: int) -> list[Fused]:
        pool = ranked[: max(MIN_MMR_POOL, limit * MMR_POOL_FACTOR)]
        if len(pool) <= 1:
            return pool[:limit]
        texts = {e.key: _content(items.get(e.key)) for e in pool}
        weights = self.config.weights
        similarity = make_similarity(items.vectors, texts, self._sources(pool, items))
        return mmr(pool, similarity, weights.mmr_lambda, limit, weights.duplicate_similarity)

    def _sources(
        self, pool: list[Fused], items: _Items
    ) -> dict[Key, frozenset[tuple[str, int, str]]]:
        """The captured messages behind each pooled item: an episode's own (its turn and side), a memory's
        provenance turns, on the user's side for what the user said and on both sides otherwise (the assistant's
        reply in the user's turn says something else than the fact the user told in it)."""
        memory_ids = [e.key[1] for e in pool if e.key[0] is ItemKind.MEMORY]
        provenance = items.provenance
        provenance.update(self.store.provenance.of(memory_ids) if memory_ids else {})
        out: dict[Key, frozenset[tuple[str, int, str]]] = {}
        for entry in pool:
            item = items.get(entry.key)
            if isinstance(item, Episode):
                out[entry.key] = frozenset({(item.session_id, item.turn_index, item.role)})
            elif item is not None:
                sides = ("user",) if origin_of(item.metadata) == USER else ("user", "assistant")
                out[entry.key] = frozenset(
                    (p.session_id, p.turn_index, side)
                    for p in provenance.get(item.id, ())
                    for side in sides
                )
        return out

    def _to_hits(
        self, chosen: list[Fused], items: _Items, explain: bool, vector_note: str
    ) -> list[Hit]:
        provenance = items.provenance
        hits = []
        for entry in chosen:
            item = items.get(entry.key)
            signals = dict(entry.signals, final=entry.score) if explain else {}
            if explain and vector_note:
                signals["vector_unavailable"] = 1.0
            if isinstance(item, Memory):
                hits.append(
                    Hit(
                        ItemKind.MEMORY,
                        item.id,
                        item.type,
                        item.content,
                        entry.score,
                        item.created_at,
                        tuple(provenance.get(item.id, ())),
                        signals,
                        superseded=not item.is_current(self.clock()),
                        amended_by=tuple(entry.amended_by),
                        carries=tuple(item_key(*k) for k in entry.carries),
                    )
                )
            elif isinstance(item, Episode):
                hits.append(
                    Hit(
                        ItemKind.EPISODE,
                        item.id,
                        None,
                        item.content,
                        entry.score,
                        item.created_at,
                        (Provenance(item.session_id, item.turn_index),),
                        signals,
                        superseded=bool(entry.signals.get("superseded")),
                        amended_by=tuple(entry.amended_by),
                        carries=tuple(item_key(*k) for k in entry.carries),
                    )
                )
        return hits


def _with_carried(chosen: list[Fused], ranked: Sequence[Fused]) -> list[Fused]:
    """The chosen, each followed by what it is never given without (its successors and amendments), also when the
    limit or the near-duplicate rule left that out: an old value is never shown with nothing to say it changed,
    and a budget that cuts from the end cuts what it carries after it (`budget.fit_to_budget`)."""
    pooled = {e.key: e for e in ranked}
    out: list[Fused] = []
    seen: set[Key] = set()

    def add(entry: Fused) -> None:
        if entry.key in seen:
            return
        seen.add(entry.key)
        out.append(entry)
        for key in entry.carries:
            if key in pooled:
                add(pooled[key])

    for entry in chosen:
        add(entry)
    return out


def _news(pool: Sequence[Fused], items: _Items) -> list[tuple[Fused, Memory]]:
    """The pooled memories that may amend another: they give up something named, or say someone moved on. Read once
    a search, however many memories pass the gate."""
    out = []
    for entry in pool:
        later = items.memories.get(entry.key[1]) if entry.key[0] is ItemKind.MEMORY else None
        if later is not None and (given_up_names(later.content) or who_moved_on(later.content)):
            out.append((entry, later))
    return out


def _amendments(memory: Memory | None, news: Sequence[tuple[Fused, Memory]]) -> list[Fused]:
    """Of `news`, those told after `memory` that give up a thing it names among others (`given_up.amends`), or say
    that someone it names moved or started somewhere new (`changes.tells_of_someone_moving_on`: "Ana started at PwC"
    with "My wife Ana works at Deloitte", which also says who the wife is and so stays)."""
    if memory is None:
        return []
    return [
        entry
        for entry, later in news
        if later.id > memory.id
        and later.id != memory.superseded_by  # its successor is carried as such
        and (
            amends(memory.type, memory.content, later.content)
            or tells_of_someone_moving_on(memory.content, later.content)
        )
    ]


def _names_holder(text: str, analysis: QueryAnalysis) -> bool:
    """Whether `text` says who holds a role the question asks for: the holder's name and one of their role words
    ("My daughter's name is Clementine" for "what is my little girl called?")."""
    return any(holds_name(text, name, possessive=True) for name in analysis.names_asked) and any(
        holds_name(text, role, ignore_case=True, possessive=True) for role in analysis.asked_roles
    )


class _ScopeKeys(Sequence[Key]):
    """The keys of a scope's items, kind by kind in id order; sorted only when indexed, since the store sample is
    redrawn rarely and sorting every id for every search cost more than the rest of the baseline."""

    def __init__(self, parts: Sequence[tuple[ItemKind, frozenset[int]]]) -> None:
        self._parts = parts
        self._keys: list[Key] | None = None

    def __len__(self) -> int:
        return sum(len(ids) for _, ids in self._parts)

    @overload
    def __getitem__(self, index: int) -> Key: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Key]: ...
    def __getitem__(self, index: int | slice) -> Key | Sequence[Key]:
        if self._keys is None:
            self._keys = [(kind, i) for kind, ids in self._parts for i in sorted(ids)]
        return self._keys[index]


def episodes_on(request: RecallRequest) -> bool:
    """Whether a request searches episodes too (not when it asks for memories of given types)."""
    return request.include_episodes and not request.types


def _read_vectors(tier: VectorTier, items: _Items, keys: Sequence[Key]) -> None:
    """The stored vectors of these memories and episodes into `items.read`, each read once a search."""
    if not tier.ready():
        return
    for kind in (ItemKind.MEMORY, ItemKind.EPISODE):
        ids = [i for k, i in keys if k is kind and (k, i) not in items.read]
        if ids:
            found = tier.vectors(kind, ids)
            items.read.update(((kind, i), found.get(i)) for i in ids)


def _searched(kinds: list[ItemKind]) -> list[ItemKind]:
    """The kinds whose ids a search reads: those it returns, and the questions that point at memories."""
    return [*kinds, ItemKind.QUESTION] if ItemKind.MEMORY in kinds else kinds


def kinds_of(with_episodes: bool) -> list[ItemKind]:
    return [ItemKind.MEMORY, ItemKind.EPISODE] if with_episodes else [ItemKind.MEMORY]


def _order(entry: Fused) -> tuple[float, bool, int]:
    """Best score first; on ties memories before episodes, then the older item."""
    return -entry.score, entry.key[0] != ItemKind.MEMORY, entry.key[1]


def _content(item: Memory | Episode | None) -> str:
    return item.content if item is not None else ""


def _text(item: Memory | Episode | None) -> str | None:
    return item.content if item is not None else None


def _visible_memory(memory: Memory, request: RecallRequest, scopes: tuple[str, ...]) -> bool:
    if (
        memory.forgotten
        or memory.scope not in scopes
        or item_key(ItemKind.MEMORY, memory.id) in request.exclude_ids
    ):
        return False
    if request.types and memory.type not in request.types:
        return False
    return _in_range(memory.created_at, request)


def _named_by_link(pool: Sequence[Fused], analysis: QueryAnalysis) -> dict[Key, str]:
    """The query's words for the one entity it names, per pooled item linked to that entity: "husband" for a
    turn about Tomasz once "my husband Tomasz" made it his alias. (With several named entities, which one an
    item links is not known here, so none.)"""
    if len(analysis.entity_names) != 1:
        return {}
    return {e.key: analysis.entity_names[0] for e in pool if LINK_SIGNALS & e.signals.keys()}


def _visible_episode(episode: Episode, request: RecallRequest, scopes: tuple[str, ...]) -> bool:
    if episode.scope not in scopes or item_key(ItemKind.EPISODE, episode.id) in request.exclude_ids:
        return False
    return _in_range(episode.created_at, request)


def _in_range(ts: float, request: RecallRequest) -> bool:
    return (request.since is None or ts >= request.since) and (
        request.until is None or ts < request.until
    )
