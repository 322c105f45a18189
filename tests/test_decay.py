"""Decay: effective importance depends on elapsed real time only, never on how often maintenance ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeClock
from store_rows import low_since

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.maintenance import Maintenance, effective_importance
from hermes_bowerbird.maintenance.decay import refresh_low_marks
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryType, NewMemory, Source

DAY = 86_400.0
T0 = 1_700_000_000.0


def make_store(path: Path, clock: FakeClock) -> Store:
    return Store.open(path, clock=clock)


def config_for(tmp_path: Path) -> Config:
    return build_config(tmp_path, {"db_path": str(tmp_path / "unused.db")})


def no_model_vectors(store: Store) -> VectorTier:
    return VectorTier(store, EmbeddingService(None, store))


def add(
    store: Store, type_: MemoryType, importance: float, content: str = "a remembered thing"
) -> int:
    return store.insert_memory(
        NewMemory("profile:default", type_, content, Source.TOOL, importance=importance)
    ).id


@pytest.mark.parametrize(
    "type_,importance",
    [
        (MemoryType.FACT, 0.6),
        (MemoryType.EVENT, 0.4),
        (MemoryType.OBSERVATION, 0.9),
        (MemoryType.GOAL, 0.9),
    ],
)
def test_same_value_whether_maintenance_ran_zero_or_a_hundred_times(
    tmp_path: Path, type_: MemoryType, importance: float
) -> None:
    config = config_for(tmp_path)
    clocks = FakeClock(T0), FakeClock(T0)
    idle, busy = (
        make_store(tmp_path / f"{name}.db", c)
        for name, c in zip(("idle", "busy"), clocks, strict=True)
    )
    idle_id, busy_id = add(idle, type_, importance), add(busy, type_, importance)
    maintenance = Maintenance(busy, no_model_vectors(busy), config, clocks[1])
    for _ in range(100):  # 100 full maintenance passes spread over 120 days
        clocks[1].now += 1.2 * DAY
        maintenance.run()
    clocks[0].now = clocks[1].now
    idle_value = effective_importance(idle.memories.require(idle_id), clocks[0].now, config)
    busy_value = effective_importance(busy.memories.require(busy_id), clocks[1].now, config)
    assert busy_value == idle_value
    # decay never rewrites importance
    assert busy.memories.require(busy_id).importance == importance
    assert 0.0 < busy_value < importance  # and it did decay over those 120 days


def test_value_falls_with_elapsed_time_and_identity_never_decays(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    store = make_store(tmp_path / "m.db", FakeClock(T0))
    fact = store.memories.require(add(store, MemoryType.FACT, 0.6))
    identity = store.memories.require(add(store, MemoryType.IDENTITY, 1.0))
    values = [effective_importance(fact, T0 + d * DAY, config) for d in (0, 30, 365, 2000)]
    assert values == sorted(values, reverse=True) and values[0] > values[-1]
    assert effective_importance(identity, T0 + 5000 * DAY, config) == 1.0


def test_decay_job_marks_memories_that_fell_low_and_clears_recovered_ones(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    clock = FakeClock(T0)
    store = make_store(tmp_path / "m.db", clock)
    low = add(store, MemoryType.OBSERVATION, 0.3)
    kept = add(store, MemoryType.DECISION, 0.05)  # exempt: never marked however low
    clock.now += 400 * DAY
    watch = refresh_low_marks(store, config, clock.now)
    assert watch.newly_low == [low]
    assert low_since(store, [low, kept]) == {low: clock.now, kept: None}
    marked_at = clock.now
    clock.now += DAY
    # the mark keeps its first time
    assert refresh_low_marks(store, config, clock.now).newly_low == []
    assert low_since(store, [low])[low] == marked_at
    store.memories.touch([low])  # recalled again: recency restarts, importance recovers
    watch = refresh_low_marks(store, config, clock.now)
    assert watch.recovered == [low]
    assert low_since(store, [low])[low] is None


def test_dry_run_decay_writes_no_marks(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    clock = FakeClock(T0)
    store = make_store(tmp_path / "m.db", clock)
    low = add(store, MemoryType.OBSERVATION, 0.3)
    clock.now += 400 * DAY
    assert refresh_low_marks(store, config, clock.now, dry_run=True).newly_low == [low]
    assert low_since(store, [low])[low] is None
