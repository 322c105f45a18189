"""Decay as maintenance sees it: the one effective-importance formula and the watch for memories that stay low."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import Config
from ..retrieval.scoring import decay_exempt, effective_importance
from ..store import Store
from ..types import Memory, MemoryType
from .budget import Budget

log = logging.getLogger(__name__)

__all__ = ["DecayReport", "LowWatch", "decay_exempt", "effective_importance", "watch_low"]

_PAGE = 20_000


@dataclass(frozen=True)
class LowWatch:
    """The low-importance state of the live, decayable memories at one moment."""

    low_since: dict[int, float]  # memory id -> since when it has been below the threshold
    newly_low: list[int]
    recovered: list[int]
    scanned: int


@dataclass(frozen=True)
class DecayReport:
    scanned: int
    low: int
    newly_low: int
    recovered: int


def decayable_memories(store: Store, config: Config, budget: Budget | None = None) -> list[Memory]:
    """Live memories of every type that may be pruned, oldest first, read in pages (content left out)."""
    exempt = decay_exempt(config)
    types = [t for t in MemoryType if t not in exempt]
    out: list[Memory] = []
    after = 0
    while True:
        page = store.memories.heads(types, after_id=after, limit=_PAGE)
        out.extend(page)
        if len(page) < _PAGE or (budget is not None and budget.exhausted()):
            return out
        after = page[-1].id


def watch_low(
    memories: Sequence[Memory], marked: dict[int, float], now: float, config: Config
) -> LowWatch:
    """Compare effective importance with the threshold: start marks for new lows, drop marks for recoveries."""
    low_since: dict[int, float] = {}
    newly_low: list[int] = []
    recovered: list[int] = []
    for memory in memories:
        low = effective_importance(memory, now, config) < config.prune_threshold
        if low:
            low_since[memory.id] = marked.get(memory.id, now)
            if memory.id not in marked:
                newly_low.append(memory.id)
        elif memory.id in marked:
            recovered.append(memory.id)
    return LowWatch(low_since, newly_low, recovered, len(memories))


def refresh_low_marks(
    store: Store, config: Config, now: float, *, dry_run: bool = False, budget: Budget | None = None
) -> LowWatch:
    """The decay job: nothing about importance is rewritten, only the `low_since` marks pruning relies on."""
    watch = watch_low(
        decayable_memories(store, config, budget), store.retention.low_marked(), now, config
    )
    if not dry_run and (watch.newly_low or watch.recovered):
        store.retention.set_low_since(
            [(i, now) for i in watch.newly_low] + [(i, None) for i in watch.recovered]
        )
    return watch


def report(watch: LowWatch) -> DecayReport:
    return DecayReport(
        watch.scanned, len(watch.low_since), len(watch.newly_low), len(watch.recovered)
    )
