"""Store queries that maintenance relies on: low marks, forgotten-before, scopes that have bulletins."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fakes import FakeClock
from store_faults import another_writer
from store_rows import low_since

from hermes_bowerbird import db
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import MemoryType, NewMemory, Source


def add(store: Store, scope: str, text: str) -> int:
    return store.insert_memory(NewMemory(scope, MemoryType.FACT, text, Source.TOOL)).id


def test_low_marked_lists_live_marked_memories_only(store_target: Path | str) -> None:
    store = Store.open(store_target, clock=FakeClock(100.0))
    a, b, c = (add(store, "user:a", t) for t in ("one", "two", "three"))
    store.retention.set_low_since([(a, 10.0), (b, 20.0)])
    store.forget(b, reason="test", actor="test")
    assert store.retention.low_marked() == {a: 10.0}
    store.retention.set_low_since([(a, None)])
    assert store.retention.low_marked() == {}
    assert low_since(store, [c]) == {c: None}


def test_forgotten_before_orders_by_forget_time(store_target: Path | str) -> None:
    clock = FakeClock(100.0)
    store = Store.open(store_target, clock=clock)
    first, second, live = (add(store, "user:a", t) for t in ("one", "two", "three"))
    clock.now = 200.0
    store.forget(second, reason="test", actor="test")
    clock.now = 300.0
    store.forget(first, reason="test", actor="test")
    assert store.retention.forgotten_before(250.0) == [second]
    assert store.retention.forgotten_before(1_000.0) == [second, first]
    assert store.retention.forgotten_before(1_000.0, limit=1) == [second]
    assert live not in store.retention.forgotten_before(1_000.0)


def test_bulletin_scopes(store_target: Path | str) -> None:
    store = Store.open(store_target)
    assert store.bulletins.scopes() == []
    store.bulletins.add("user:b", "text", "hash", "deterministic")
    store.bulletins.add("user:b", "text 2", "hash2", "deterministic")
    assert store.bulletins.scopes() == ["user:b"]


def test_memory_heads_are_live_memories_of_the_types_without_content(
    store_target: Path | str,
) -> None:
    store = Store.open(store_target)
    fact = add(store, "user:a", "a fact")
    event = store.insert_memory(
        NewMemory("user:b", MemoryType.EVENT, "an event", Source.TURN, subject="trip", tags=("x",))
    ).id
    gone = add(store, "user:a", "a forgotten fact")
    store.forget(gone, reason="test", actor="test")
    store.memories.touch([event])
    heads = store.memories.heads([MemoryType.FACT, MemoryType.EVENT])
    assert [h.id for h in heads] == [fact, event]
    full = store.memories.require(event)
    assert heads[1].content == ""
    assert heads[1].tags == ()
    assert (
        heads[1].scope,
        heads[1].subject,
        heads[1].access_count,
        heads[1].accessed_at,
        heads[1].source,
    ) == (full.scope, full.subject, full.access_count, full.accessed_at, full.source)
    assert [
        h.id for h in store.memories.heads([MemoryType.FACT, MemoryType.EVENT], after_id=fact)
    ] == [event]
    assert store.memories.heads([MemoryType.FACT], limit=1)[0].id == fact


def test_access_counts_of_different_sizes_are_each_written(store: Store) -> None:
    """Counts waiting in memory differ (a memory recalled twice while the database was busy, another once): each is
    added whole, and no other memory's count moves."""
    a, b, c, d = (add(store, "user:a", t) for t in ("one", "two", "three", "four"))
    with another_writer(store):
        store.memories.touch([a, b, c])
        store.memories.touch([a, b])
        store.memories.touch([a])
    store.memories.touch([b, c])
    counts = {i: m.access_count for i, m in store.memories.get_many([a, b, c, d]).items()}
    assert counts == {a: 3, b: 3, c: 2, d: 0}


def test_access_counts_wait_in_memory_while_another_writer_holds_the_database(
    store_target: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall never waits on the curation worker's write lock for its bookkeeping, and loses no count."""
    store = Store.open(store_target)
    a, b = (add(store, "user:a", t) for t in ("one", "two"))
    monkeypatch.setattr(
        db, "BUSY_TIMEOUT_MS", 60_000
    )  # a wait inside SQLite would outlast the join
    with another_writer(store):
        recall = threading.Thread(target=lambda: store.memories.touch([a, b]))
        recall.start()
        recall.join(10)
        assert not recall.is_alive()
        store.memories.touch([a])
        assert [m.access_count for m in store.memories.get_many([a, b]).values()] == [0, 0]
    store.memories.touch([b])
    counts = {i: m.access_count for i, m in store.memories.get_many([a, b]).items()}
    assert counts == {a: 2, b: 2}
    store.memories.touch([])  # nothing waits: nothing more is counted
    assert store.memories.get_many([a]).get(a).access_count == 2  # type: ignore[union-attr]
    store.close()
