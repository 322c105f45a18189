"""Association building: link each new memory to its close neighbours (related_to), or supersede same-subject ones."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import takewhile

import numpy as np

from ..config import Config
from ..embeddings.tier import VectorTier
from ..store import Store
from ..types import Memory, MemoryFilter, Relation
from .budget import Budget
from .neighbours import ScopeNeighbours, same_scope, vectors_for

log = logging.getLogger(__name__)

CURSOR_KEY = "maintenance.associate.cursor"
ACTOR = "maintenance"
SEARCH_K = 16
MAX_RELATED = 5
_STEP = 1_000  # memories per matrix product; the cursor advances after each step


@dataclass(frozen=True)
class LinkPlan:
    """What association would do for one new memory."""

    memory_id: int
    related: list[tuple[int, float]] = field(default_factory=list)  # (older memory id, cosine)
    # older same-subject memories this one replaces
    supersedes: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class AssociateResult:
    processed: int
    related: int
    superseded: int
    cursor: int
    remaining: bool  # new memories are left for the next run


class Associator:
    """Incremental: a cursor in the store's meta table remembers the last memory id already linked."""

    def __init__(
        self, store: Store, vectors: VectorTier, config: Config, *, batch: int = 1_000
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.config = config
        self.batch = batch

    def cursor(self) -> int:
        return int(self.store.meta.get(CURSOR_KEY, "0") or 0)

    def run(self, *, dry_run: bool = False, budget: Budget | None = None) -> AssociateResult:
        cursor = self.cursor()
        if not self.vectors.ready():
            return AssociateResult(0, 0, 0, cursor, False)
        new = self.store.memories.find(
            None, MemoryFilter(order="oldest", after_id=cursor, limit=self.batch)
        )
        vecs = vectors_for(self.vectors, new, embed_missing=not dry_run)
        # later ones wait until the model has embedded them
        ready = list(takewhile(lambda m: m.id in vecs, new))
        finder = ScopeNeighbours(self.store, self.vectors)
        processed = related = superseded = 0
        for start in range(0, len(ready), _STEP):
            if budget is not None and budget.exhausted():
                break
            step = ready[start : start + _STEP]
            for plan in self.plan(step, vecs, finder):
                if not dry_run:
                    self.apply(plan)
                related += len(plan.related)
                superseded += len(plan.supersedes)
            processed += len(step)
            cursor = step[-1].id
            if not dry_run:
                self.store.meta.set(CURSOR_KEY, str(cursor))
        return AssociateResult(
            processed, related, superseded, cursor, processed < len(new) or len(new) == self.batch
        )

    def plan(
        self, memories: Sequence[Memory], vecs: Mapping[int, np.ndarray], finder: ScopeNeighbours
    ) -> list[LinkPlan]:
        """Links for each memory to older neighbours (each pair is considered once, by its newer member)."""
        current = [m for m in memories if m.superseded_by is None]
        hits = finder.search_each(
            current, vecs, k=SEARCH_K, threshold=self.config.association_threshold
        )
        known = self.store.memories.get_many(i for found in hits.values() for i, _ in found)
        plans = []
        for memory in current:
            older = [(i, s) for i, s in hits.get(memory.id, []) if i < memory.id]
            plan = LinkPlan(memory.id)
            for other, score in same_scope(known, older, memory.scope):
                if self._updates(memory, other, score):
                    plan.supersedes.append(other.id)
                elif len(plan.related) < MAX_RELATED:
                    plan.related.append((other.id, round(score, 4)))
            if plan.related or plan.supersedes:
                plans.append(plan)
        return plans

    def _updates(self, memory: Memory, other: Memory, score: float) -> bool:
        return (
            score >= self.config.update_candidate_threshold
            and memory.subject is not None
            and other.subject == memory.subject
            and other.superseded_by is None
        )

    def apply(self, plan: LinkPlan) -> None:
        with self.store.transaction():
            for other_id, score in plan.related:
                self.store.add_edge(plan.memory_id, other_id, Relation.RELATED_TO, score)
            for old_id in plan.supersedes:
                self.store.supersede(
                    old_id,
                    plan.memory_id,
                    reason="same subject, near-identical meaning",
                    actor=ACTOR,
                )
