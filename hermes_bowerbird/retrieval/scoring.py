"""Effective importance of a memory: stored importance x decay by elapsed real time x access boost.

Decay is a pure function of elapsed time (never compounded per maintenance run): a memory that has not been
created, reinforced or recalled for one half-life keeps half its weight. Durable kinds decay more slowly
(`TYPE_HALF_LIFE_FACTOR`); the types in `config.decay_exempt_types` (identity, decision and procedure by default)
never decay, and pruning leaves them alone. Every recall or reinforcement (`accessed_at`) restarts the
clock, and the access count adds a logarithmic boost, so a memory used often stays near the top.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Mapping

from ..config import Config
from ..timestamps import DAY
from ..types import Memory, MemoryType
from .tuning import MAX_ACCESS_BOOST

# Half-life multiplier per type (x config.weights.decay_half_life_days) for types not exempt from decay.
TYPE_HALF_LIFE_FACTOR: Mapping[MemoryType, float] = {
    MemoryType.IDENTITY: 4.0,
    MemoryType.GOAL: 2.0,
    MemoryType.DECISION: 2.0,
    MemoryType.PROCEDURE: 3.0,
    MemoryType.PREFERENCE: 3.0,
    MemoryType.PATTERN: 2.0,
    MemoryType.FACT: 2.0,
    MemoryType.TODO: 1.0,
    MemoryType.EVENT: 0.5,
    MemoryType.OBSERVATION: 0.5,
}


def decay_exempt(config: Config) -> frozenset[MemoryType]:
    """The memory types that never decay (and are never pruned), from `config.decay_exempt_types`."""
    return _parse_types(config.decay_exempt_types)


@functools.lru_cache(maxsize=16)
def _parse_types(text: str) -> frozenset[MemoryType]:
    return frozenset(MemoryType(name) for name in (part.strip() for part in text.split(",")) if name)


def decay_factor(memory: Memory, now: float, half_life_days: float,
                 exempt: Collection[MemoryType] = frozenset()) -> float:
    """0..1: how much of its importance a memory keeps after the time since it was last created or used."""
    factor = TYPE_HALF_LIFE_FACTOR.get(memory.type, 1.0)
    if half_life_days <= 0 or memory.type in exempt:
        return 1.0
    last = max(memory.created_at, memory.accessed_at or 0.0)
    elapsed_days = max(0.0, now - last) / DAY
    return float(0.5 ** (elapsed_days / (half_life_days * factor)))


def access_boost(access_count: int, per_doubling: float) -> float:
    """1 for a never-recalled memory, +`per_doubling` for each doubling of its access count, capped at 2."""
    return min(MAX_ACCESS_BOOST, 1.0 + per_doubling * math.log2(1 + max(0, access_count)))


def effective_importance(memory: Memory, now: float, config: Config) -> float:
    """importance x decay x access boost, clamped to 0..1."""
    weights = config.weights
    value = (memory.importance * decay_factor(memory, now, weights.decay_half_life_days, decay_exempt(config))
             * access_boost(memory.access_count, weights.access_boost))
    return min(1.0, max(0.0, value))
