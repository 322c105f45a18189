"""Consolidation: memories that really repeat (one subject, several sessions) become one `pattern` memory linked to
its examples; the examples keep their importance, and a cluster is consolidated once even by concurrent runs."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import takewhile

import numpy as np

from ..config import Config
from ..embeddings.tier import VectorTier
from ..store import Store
from ..types import (
    DEFAULT_IMPORTANCE,
    LLM,
    AuditAction,
    ItemKind,
    Memory,
    MemoryFilter,
    MemoryType,
    NewMemory,
    Relation,
)
from .budget import Budget
from .neighbours import ScopeNeighbours, same_scope, vectors_for

log = logging.getLogger(__name__)

CURSOR_KEY = "maintenance.consolidate.cursor"
ACTOR = "maintenance"
CONSOLIDATABLE: frozenset[MemoryType] = frozenset(
    {MemoryType.EVENT, MemoryType.OBSERVATION, MemoryType.FACT, MemoryType.PREFERENCE}
)
# a pattern is a repeat across sessions, not one conversation going on about something
MIN_SESSIONS = 2
SEARCH_K = 32
_STEP = 1_000  # seeds per matrix product; the cursor advances after each step
MAX_PATTERN_WORDS = 60
_SYSTEM = (
    "You summarise recurring notes from a personal assistant's long-term memory. Reply with one plain "
    "sentence that states the recurring pattern. No preamble, no list, no quotes."
)


@dataclass
class Cluster:
    scope: str
    members: list[Memory]  # the seed first
    similarity: dict[int, float]  # member id -> cosine to the seed
    pattern_id: int | None = field(default=None, compare=False)

    def central(self, vecs: dict[int, np.ndarray]) -> Memory:
        """The member with the highest mean similarity to the others."""
        matrix = np.stack([vecs[m.id] for m in self.members])
        sims = matrix @ matrix.T
        return self.members[int(np.argmax(sims.sum(axis=1)))]


@dataclass(frozen=True)
class ConsolidateResult:
    seeds: int
    clusters: int
    patterns: list[int]
    linked: int  # examples linked to a pattern (their importance is left as it was)


def heuristic_text(central: Memory, members: Sequence[Memory]) -> str:
    """The most central member's text with a count, e.g. '... (seen 5 times since March)'."""
    first = datetime.fromtimestamp(min(m.created_at for m in members))
    latest = datetime.fromtimestamp(max(m.created_at for m in members))
    since = first.strftime("%B") if first.year == latest.year else first.strftime("%B %Y")
    return f"{central.content.rstrip('. ')} (seen {len(members)} times since {since})"


def llm_text(llm: LLM, members: Sequence[Memory]) -> str | None:
    """One synthesised sentence, or None when the model fails or answers with something unusable."""
    notes = "\n".join(f"- {m.content}" for m in members[:12])
    prompt = f"These {len(members)} notes recur in memory:\n{notes}\n\nState the pattern in one sentence."
    try:
        text = llm.complete(prompt, system=_SYSTEM, max_tokens=120, timeout=30.0).strip().strip('"')
    except Exception:  # any failure of an external model falls back to the heuristic text
        log.warning(
            "pattern synthesis with %s failed; using the heuristic text", llm.name, exc_info=True
        )
        return None
    if not text or len(text.split()) > MAX_PATTERN_WORDS:
        return None
    return text


def _same_subject(seed: Memory, other: Memory, entities: Mapping[int, list[int]]) -> bool:
    """Both about one thing: the same subject key, or (without one) at least one entity in common."""
    if seed.subject or other.subject:
        return seed.subject == other.subject
    return bool(set(entities.get(seed.id, ())) & set(entities.get(other.id, ())))


def _sessions(members: Sequence[Memory]) -> int:
    """Distinct sessions the members were said in (a memory without one counts as its own)."""
    return len({m.session_id or f"#{m.id}" for m in members})


class Consolidator:
    """Incremental like association: each new memory is a seed; its close, not yet consolidated neighbours of the
    same type and scope form the cluster. Members get a `part_of` edge, so no cluster is consolidated twice."""

    def __init__(
        self,
        store: Store,
        vectors: VectorTier,
        config: Config,
        llm: LLM | None = None,
        *,
        batch: int = 500,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.config = config
        self.llm = llm
        self.batch = batch

    def run(self, *, dry_run: bool = False, budget: Budget | None = None) -> ConsolidateResult:
        cursor = int(self.store.meta.get(CURSOR_KEY, "0") or 0)
        if not self.vectors.ready():
            return ConsolidateResult(0, 0, [], 0)
        seeds = self.store.memories.find(
            None,
            MemoryFilter(
                types=sorted(CONSOLIDATABLE),
                current_only=True,
                order="oldest",
                after_id=cursor,
                limit=self.batch,
            ),
        )
        vecs = vectors_for(self.vectors, seeds, embed_missing=not dry_run)
        ready = list(takewhile(lambda m: m.id in vecs, seeds))
        finder = ScopeNeighbours(self.store, self.vectors)
        used: set[int] = set()
        clusters: list[Cluster] = []
        done = 0
        for start in range(0, len(ready), _STEP):
            if budget is not None and budget.exhausted():
                break
            step = ready[start : start + _STEP]
            found = self.find_clusters(step, vecs, finder, used)
            if not dry_run:
                for cluster in found:
                    self.consolidate(cluster)
                self.store.meta.set(CURSOR_KEY, str(step[-1].id))
            clusters += found
            done += len(step)
        patterns = [] if dry_run else [c.pattern_id for c in clusters if c.pattern_id]
        return ConsolidateResult(
            done, len(clusters), patterns, sum(len(c.members) for c in clusters)
        )

    def find_clusters(
        self,
        seeds: Sequence[Memory],
        vecs: Mapping[int, np.ndarray],
        finder: ScopeNeighbours,
        used: set[int],
    ) -> list[Cluster]:
        """Each seed with its close, current, not yet consolidated neighbours of the same type and scope."""
        hits = finder.search_each(
            seeds, vecs, k=SEARCH_K, threshold=self.config.consolidation_threshold
        )
        known = self.store.memories.get_many(i for found in hits.values() for i, _ in found)
        taken = self._consolidated({m.id for m in seeds} | set(known))
        taken |= set(
            self.store.quarantine.reasons(ItemKind.MEMORY, {m.id for m in seeds} | set(known))
        )
        entities = self.store.graph.entities_of_memories(sorted({m.id for m in seeds} | set(known)))
        clusters = []
        for seed in seeds:
            if seed.id in used or seed.id in taken:
                continue
            excluded = used | taken
            found = [
                (m, s)
                for m, s in same_scope(known, hits[seed.id], seed.scope)
                if m.type is seed.type
                and m.superseded_by is None
                and m.id not in excluded
                and _same_subject(seed, m, entities)
            ]
            if (
                len(found) + 1 >= self.config.consolidation_min_cluster
                and _sessions([seed] + [m for m, _ in found]) >= MIN_SESSIONS
            ):
                cluster = Cluster(
                    seed.scope,
                    [seed] + [m for m, _ in found],
                    {seed.id: 1.0} | {m.id: s for m, s in found},
                )
                used.update(m.id for m in cluster.members)
                clusters.append(cluster)
        return clusters

    def _consolidated(self, ids: set[int]) -> set[int]:
        """Those of `ids` already part of a pattern."""
        if not ids:
            return set()
        return {
            e.src_id
            for e in self.store.graph.edges_of(sorted(ids))
            if e.relation is Relation.PART_OF and e.src_id in ids
        }

    def consolidate(self, cluster: Cluster) -> int:
        """Store the pattern, link the examples to it and demote them (audited, never deleted)."""
        members = sorted(cluster.members, key=lambda m: m.created_at)
        vecs = self.vectors.vectors(ItemKind.MEMORY, [m.id for m in members])
        central = cluster.central(vecs) if len(vecs) == len(members) else members[0]
        synthesised = llm_text(self.llm, members) if self.llm is not None else None
        text = synthesised or heuristic_text(central, members)
        importance = max([DEFAULT_IMPORTANCE[MemoryType.PATTERN]] + [m.importance for m in members])
        provenance = self.store.provenance.of([m.id for m in members])
        new = NewMemory(
            scope=cluster.scope,
            type=MemoryType.PATTERN,
            content=text,
            source=central.source,
            importance=importance,
            provenance=tuple(p for m in members for p in provenance[m.id]),
            metadata={
                "examples": [m.id for m in members],
                "generator": f"llm:{self.llm.name}" if synthesised and self.llm else "heuristic",
            },
        )
        # an immediate transaction: a concurrent run waits, then sees our edges
        with self.store.transaction():
            if self._consolidated({m.id for m in members}) or self.store.memories.find_by_hash(
                cluster.scope, text
            ):
                log.info(
                    "a cluster of %d memories was consolidated meanwhile; skipped", len(members)
                )
                return 0
            pattern = self.store.insert_memory(
                new, actor=ACTOR, reason=f"consolidated from {len(members)} memories"
            )
            self.store.audit.add(
                pattern.id,
                AuditAction.CONSOLIDATE,
                "pattern of similar memories",
                ACTOR,
                {"examples": [m.id for m in members]},
            )
            for member in members:
                self.store.add_edge(
                    member.id, pattern.id, Relation.PART_OF, cluster.similarity.get(member.id, 1.0)
                )
                self.store.audit.add(
                    member.id, AuditAction.CONSOLIDATE, f"example of pattern {pattern.id}", ACTOR
                )
        self.vectors.add(ItemKind.MEMORY, [(pattern.id, pattern.content)])
        cluster.pattern_id = pattern.id
        return pattern.id
