"""Pruning: soft-forget memories that stayed unimportant past a grace period; purge long-forgotten ones."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..config import Config
from ..store import Store
from ..timestamps import DAY
from ..types import ItemKind, Memory, Relation
from .budget import Budget
from .decay import decay_exempt, refresh_low_marks

log = logging.getLogger(__name__)

ACTOR = "maintenance"
_PURGE_BATCH = 20  # purges per transaction; the budget is checked between them


class VectorRemover(Protocol):
    """The one capability purge needs from the vector tier (VectorTier has it)."""

    def remove(self, kind: ItemKind, ids: Sequence[int]) -> None: ...


@dataclass(frozen=True)
class PruneResult:
    scanned: int
    low: int
    candidates: list[int]  # ids past the grace period (forgotten unless dry-run)
    protected: int  # past the grace period but kept as the current value of a fact
    forgotten: int


@dataclass(frozen=True)
class PurgeResult:
    candidates: list[int]
    purged: int
    episodes_deleted: int
    entities_deleted: int = 0


def current_fact_ids(store: Store, memories: Sequence[Memory]) -> set[int]:
    """Those of `memories` that are the current value of a fact (pruning must keep them)."""
    live = [m for m in memories if m.superseded_by is None]
    if not live:
        return set()
    ids = {m.id for m in live}
    keep = {
        e.src_id
        for e in store.graph.edges_of(sorted(ids))
        if e.relation is Relation.UPDATES and e.src_id in ids
    }
    for memory in live:
        if memory.subject and memory.id not in keep:
            current = store.memories.current_by_subject(memory.scope, memory.subject)
            if current and current[0].id == memory.id:
                keep.add(memory.id)
    return keep


def prune(
    store: Store, config: Config, now: float, *, dry_run: bool = False, budget: Budget | None = None
) -> PruneResult:
    """Soft-forget (with an audit row) memories below the threshold for longer than the grace period."""
    watch = refresh_low_marks(store, config, now, dry_run=dry_run, budget=budget)
    cutoff = now - config.prune_grace_days * DAY
    due = [i for i, since in watch.low_since.items() if since <= cutoff]
    memories = store.memories.get_many(due)
    exempt = decay_exempt(config)
    due = sorted(i for i in due if i in memories and memories[i].type not in exempt)
    protected = current_fact_ids(store, [memories[i] for i in due])
    candidates = [i for i in due if i not in protected]
    if not dry_run:
        with store.transaction():
            for memory_id in candidates:
                store.forget(
                    memory_id,
                    reason=f"effective importance below {config.prune_threshold} for more "
                    f"than {config.prune_grace_days:g} days",
                    actor=ACTOR,
                )
    return PruneResult(
        watch.scanned,
        len(watch.low_since),
        candidates,
        len(protected),
        0 if dry_run else len(candidates),
    )


def purge(
    store: Store,
    config: Config,
    now: float,
    *,
    dry_run: bool = False,
    vectors: VectorRemover | None = None,
    budget: Budget | None = None,
) -> PurgeResult:
    """Hard-delete memories forgotten more than `purge_after_days` ago; old episodes only under a retention."""
    candidates = store.retention.forgotten_before(now - config.purge_after_days * DAY)
    if dry_run:
        return PurgeResult(candidates, 0, 0)
    purged: list[int] = []
    for start in range(0, len(candidates), _PURGE_BATCH):
        if budget is not None and budget.exhausted():
            break  # the rest waits for the next run
        batch = candidates[start : start + _PURGE_BATCH]
        with store.transaction():
            for memory_id in batch:
                store.purge(
                    memory_id,
                    reason=f"forgotten for more than {config.purge_after_days:g} days",
                    actor=ACTOR,
                )
        purged += batch
    if vectors is not None and purged:
        vectors.remove(ItemKind.MEMORY, purged)
    episodes: list[int] = []
    if config.episode_retention_days > 0:
        episodes = store.delete_episodes_before(now - config.episode_retention_days * DAY)
        if vectors is not None and episodes:
            # a running process's index would still return them
            vectors.remove(ItemKind.EPISODE, episodes)
    entities = 0
    if purged or episodes:
        entities = store.graph.delete_unlinked()
        store.health.scrub_deleted()  # no deleted text left in free pages, the full-text index or the WAL
    return PurgeResult(candidates, len(purged), len(episodes), entities)
