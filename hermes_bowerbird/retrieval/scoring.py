"""Effective importance of a memory: stored importance x decay by elapsed real time x access boost.

Decay is a pure function of elapsed time (never compounded per maintenance run): a memory that has not been
created, reinforced or recalled for one half-life keeps half its weight. Durable kinds decay more slowly
(`TypeSpec.half_life_factor`); the types in `config.decay_exempt_types` (identity, decision and procedure by default)
never decay, and pruning leaves them alone. Every recall or reinforcement (`accessed_at`) restarts the
clock, and the access count adds a logarithmic boost, so a memory used often stays near the top.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection

from ..config import Config
from ..timestamps import DAY
from ..types import Memory, MemoryType, memory_type, type_spec
from .tuning import MAX_ACCESS_BOOST


def decay_exempt(config: Config) -> frozenset[MemoryType]:
    """The memory types that never decay (and are never pruned), from `config.decay_exempt_types`."""
    return _parse_types(config.decay_exempt_types)


@functools.lru_cache(maxsize=16)
def _parse_types(text: str) -> frozenset[MemoryType]:
    return frozenset(
        memory_type(name) for name in (part.strip() for part in text.split(",")) if name
    )


def decay_factor(
    memory: Memory, now: float, half_life_days: float, exempt: Collection[MemoryType] = frozenset()
) -> float:
    """0..1: how much of its importance a memory keeps after the time since it was last created or used."""
    if half_life_days <= 0 or memory.type in exempt:
        return 1.0
    factor = type_spec(memory.type).half_life_factor
    last = max(memory.created_at, memory.accessed_at or 0.0)
    elapsed_days = max(0.0, now - last) / DAY
    return float(0.5 ** (elapsed_days / (half_life_days * factor)))


def access_boost(access_count: int, per_doubling: float) -> float:
    """1 for a never-recalled memory, +`per_doubling` for each doubling of its access count, capped at 2."""
    return min(MAX_ACCESS_BOOST, 1.0 + per_doubling * math.log2(1 + max(0, access_count)))


def effective_importance(memory: Memory, now: float, config: Config) -> float:
    """importance x decay x access boost, clamped to 0..1."""
    weights = config.weights
    value = (
        memory.importance
        * decay_factor(memory, now, weights.decay_half_life_days, decay_exempt(config))
        * access_boost(memory.access_count, weights.access_boost)
    )
    return min(1.0, max(0.0, value))
