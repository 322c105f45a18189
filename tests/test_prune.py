"""Pruning and purging: what is forgotten, what is always kept, and that a dry run changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from fakes import FakeClock
from store_rows import low_since

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.maintenance.prune import prune, purge
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewEpisode, NewMemory, Source

DAY = 86_400.0
T0 = 1_700_000_000.0
SCOPE = "user:alice"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Store:
    return Store.open(tmp_path / "m.db", clock=clock)


def add(
    store: Store, type_: MemoryType, importance: float, content: str, subject: str | None = None
) -> int:
    return store.insert_memory(
        NewMemory(SCOPE, type_, content, Source.TURN, importance=importance, subject=subject)
    ).id


def low_observation(store: Store) -> int:
    return add(store, MemoryType.OBSERVATION, 0.3, "the user seemed tired")


def exempt(type_: MemoryType) -> Callable[[Store], int]:
    return lambda store: add(store, type_, 0.05, f"a barely important {type_}")


def current_subject_fact(store: Store) -> int:
    return add(store, MemoryType.FACT, 0.05, "the user lives in Berlin", subject="user:residence")


def superseded_subject_fact(store: Store) -> int:
    old = add(store, MemoryType.FACT, 0.05, "the user lives in Paris", subject="user:residence")
    new = add(store, MemoryType.FACT, 0.05, "the user lives in Berlin", subject="user:residence")
    store.supersede(old, new, reason="moved", actor="test")
    return old


def successor_of_update(store: Store) -> int:
    old = add(store, MemoryType.FACT, 0.05, "the deploy tool is Fabric")
    new = add(store, MemoryType.FACT, 0.05, "the deploy tool is Ansible")
    store.supersede(old, new, reason="switched", actor="test")
    return new


def older_of_two_current_subject_facts(store: Store) -> int:
    older = add(store, MemoryType.FACT, 0.05, "the user drives a Golf", subject="user:car")
    add(store, MemoryType.FACT, 0.05, "the user drives a Polo", subject="user:car")
    return older


def important_fact(store: Store) -> int:
    return add(store, MemoryType.FACT, 0.9, "the user is allergic to penicillin")


CASES = [
    ("low observation", low_observation, True),
    ("identity", exempt(MemoryType.IDENTITY), False),
    ("decision", exempt(MemoryType.DECISION), False),
    ("procedure", exempt(MemoryType.PROCEDURE), False),
    ("current value of a subject", current_subject_fact, False),
    ("superseded value of a subject", superseded_subject_fact, True),
    ("successor in an updates edge", successor_of_update, False),
    ("older of two current subject values", older_of_two_current_subject_facts, True),
    ("still important", important_fact, False),
]


@pytest.mark.parametrize("name,build,forgotten", CASES, ids=[c[0] for c in CASES])
def test_prune_table(
    store: Store,
    clock: FakeClock,
    config: Config,
    name: str,
    build: Callable[[Store], int],
    forgotten: bool,
) -> None:
    memory_id = build(store)
    clock.now += 400 * DAY
    prune(store, config, clock.now)  # first sighting below the threshold starts the grace period
    assert not store.memories.require(memory_id).forgotten
    clock.now += (config.prune_grace_days + 1) * DAY
    result = prune(store, config, clock.now)
    assert store.memories.require(memory_id).forgotten is forgotten
    assert (memory_id in result.candidates) is forgotten
    if forgotten:
        audit = store.audit.of_memory(memory_id)[-1]
        assert audit.action == "forget" and audit.actor == "maintenance"


def test_nothing_is_forgotten_inside_the_grace_period(
    store: Store, clock: FakeClock, config: Config
) -> None:
    memory_id = low_observation(store)
    clock.now += 400 * DAY
    prune(store, config, clock.now)
    clock.now += (config.prune_grace_days - 1) * DAY
    assert prune(store, config, clock.now).forgotten == 0
    assert not store.memories.require(memory_id).forgotten


def test_a_recall_during_the_grace_period_saves_the_memory(
    store: Store, clock: FakeClock, config: Config
) -> None:
    memory_id = low_observation(store)
    clock.now += 400 * DAY
    prune(store, config, clock.now)
    clock.now += 10 * DAY
    store.memories.touch([memory_id])
    clock.now += config.prune_grace_days * DAY
    prune(store, config, clock.now)
    assert not store.memories.require(memory_id).forgotten


def snapshot(store: Store, ids: list[int]) -> tuple[object, ...]:
    memories = store.memories.get_many(ids)
    return (
        memories,
        low_since(store, ids),
        [store.audit.of_memory(i) for i in ids],
        store.health.counts(),
    )


def test_dry_run_lists_candidates_and_changes_nothing(
    store: Store, clock: FakeClock, config: Config
) -> None:
    ids = [build(store) for _, build, _ in CASES]
    clock.now += 400 * DAY
    prune(store, config, clock.now)
    clock.now += (config.prune_grace_days + 1) * DAY
    before = snapshot(store, ids)
    dry = prune(store, config, clock.now, dry_run=True)
    assert snapshot(store, ids) == before
    assert dry.forgotten == 0 and dry.candidates
    real = prune(store, config, clock.now)
    assert real.candidates == dry.candidates and real.forgotten == len(dry.candidates)


def test_dry_run_from_a_fresh_store_marks_nothing(
    store: Store, clock: FakeClock, config: Config
) -> None:
    memory_id = low_observation(store)
    clock.now += 400 * DAY
    before = snapshot(store, [memory_id])
    assert prune(store, config, clock.now, dry_run=True).low == 1
    assert snapshot(store, [memory_id]) == before


def test_purge_deletes_only_long_forgotten_memories(
    store: Store, clock: FakeClock, config: Config
) -> None:
    old = low_observation(store)
    store.forget(old, reason="test", actor="test")
    clock.now += (config.purge_after_days - 10) * DAY
    recent = add(store, MemoryType.FACT, 0.6, "forgotten only recently")
    store.forget(recent, reason="test", actor="test")
    live = add(store, MemoryType.FACT, 0.6, "still remembered")
    clock.now += 11 * DAY
    assert purge(store, config, clock.now, dry_run=True).candidates == [old]
    assert store.memories.get(old) is not None
    result = purge(store, config, clock.now)
    assert result.purged == 1
    assert store.memories.get(old) is None
    assert store.memories.get(recent) is not None and store.memories.get(live) is not None
    assert store.audit.of_memory(old)[-1].action == "purge"


@pytest.mark.parametrize("retention_days,kept", [(0.0, 2), (30.0, 1)])
def test_episodes_are_kept_unless_a_retention_is_configured(
    tmp_path: Path, store: Store, clock: FakeClock, retention_days: float, kept: int
) -> None:
    config = build_config(
        tmp_path, {"db_path": str(tmp_path / "unused.db"), "episode_retention_days": retention_days}
    )
    first = store.episodes.insert(
        NewEpisode(
            scope=SCOPE,
            session_id="s",
            turn_index=0,
            chunk_index=0,
            role="user",
            content="old turn",
        )
    )
    clock.now += 60 * DAY
    store.episodes.insert(
        NewEpisode(
            scope=SCOPE,
            session_id="s",
            turn_index=1,
            chunk_index=0,
            role="user",
            content="new turn",
        )
    )
    removed: list[tuple[ItemKind, list[int]]] = []

    class Vectors:
        def remove(self, kind: ItemKind, ids: Sequence[int]) -> None:
            removed.append((kind, list(ids)))

    purge(store, config, clock.now, vectors=Vectors())
    assert len(store.episodes.find([SCOPE])) == kept
    assert removed == ([] if kept == 2 else [(ItemKind.EPISODE, [first])])
