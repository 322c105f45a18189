"""Association building: incremental by cursor, related_to by similarity, supersession only within a subject."""

from __future__ import annotations

import pytest
from store_rows import count_edges

from hermes_bowerbird.config import Config
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.maintenance import Associator
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Relation, Source

RUN = "I went for a run in the park this morning."
RUN_AGAIN = "This morning I went for a run in the park."
UNRELATED = "The quarterly report is due on Friday."


def add(
    store: Store,
    vectors: VectorTier,
    content: str,
    *,
    scope: str = "user:alice",
    subject: str | None = None,
    embed: bool = True,
) -> int:
    memory = store.insert_memory(
        NewMemory(scope, MemoryType.FACT, content, Source.TURN, subject=subject)
    )
    if embed:
        vectors.add(ItemKind.MEMORY, [(memory.id, content)])
    return memory.id


def relations(store: Store, memory_id: int) -> set[tuple[int, int, Relation]]:
    return {(e.src_id, e.dst_id, e.relation) for e in store.graph.edges_of([memory_id])}


def test_only_new_memories_are_processed_and_linked_to_older_neighbours(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    associator = Associator(store, vectors, config)
    first = add(store, vectors, RUN)
    add(store, vectors, UNRELATED)
    result = associator.run()
    assert (result.processed, result.related) == (2, 0)
    assert associator.cursor() == result.cursor > first
    again = add(store, vectors, RUN_AGAIN)
    result = associator.run()
    assert (result.processed, result.related, result.cursor) == (1, 1, again)
    edge = next(e for e in store.graph.edges_of([again]) if e.relation is Relation.RELATED_TO)
    assert (edge.src_id, edge.dst_id) == (again, first)
    assert edge.weight >= config.association_threshold
    assert associator.run().processed == 0  # nothing new: no work


def test_no_links_across_scopes(store: Store, vectors: VectorTier, config: Config) -> None:
    alice = add(store, vectors, RUN, scope="user:alice")
    bob = add(store, vectors, RUN_AGAIN, scope="user:bob")
    assert Associator(store, vectors, config).run().related == 0
    assert relations(store, alice) == set()
    assert relations(store, bob) == set()


@pytest.mark.parametrize(
    "old_subject,new_subject,superseded",
    [
        ("user:residence", "user:residence", True),
        ("user:residence", "user:office", False),
        (None, None, False),
    ],
)
def test_near_identical_same_subject_memories_supersede(
    store: Store,
    vectors: VectorTier,
    config: Config,
    old_subject: str | None,
    new_subject: str | None,
    superseded: bool,
) -> None:
    old = add(store, vectors, "The user lives in Berlin now.", subject=old_subject)
    new = add(store, vectors, "The user now lives in Berlin.", subject=new_subject)
    result = Associator(store, vectors, config).run()
    assert (store.memories.require(old).superseded_by == new) is superseded
    expected = Relation.UPDATES if superseded else Relation.RELATED_TO
    assert relations(store, old) == {(new, old, expected)}
    assert (result.superseded, result.related) == ((1, 0) if superseded else (0, 1))


def test_dry_run_changes_nothing(store: Store, vectors: VectorTier, config: Config) -> None:
    add(store, vectors, RUN)
    add(store, vectors, RUN_AGAIN)
    associator = Associator(store, vectors, config)
    assert associator.run(dry_run=True).related == 1
    assert count_edges(store) == {}
    assert associator.cursor() == 0


def test_memories_without_vectors_are_embedded_first(
    store: Store, vectors: VectorTier, config: Config
) -> None:
    first = add(store, vectors, RUN, embed=False)
    second = add(store, vectors, RUN_AGAIN, embed=False)
    assert Associator(store, vectors, config).run().related == 1
    assert relations(store, second) == {(second, first, Relation.RELATED_TO)}


def test_without_a_model_nothing_happens_and_the_cursor_waits(store: Store, config: Config) -> None:
    no_model = VectorTier(store, EmbeddingService(None, store))
    store.insert_memory(NewMemory("user:alice", MemoryType.FACT, RUN, Source.TURN))
    associator = Associator(store, no_model, config)
    assert associator.run().processed == 0
    assert associator.cursor() == 0


def test_work_per_run_is_bounded(store: Store, vectors: VectorTier, config: Config) -> None:
    for n in range(5):
        add(store, vectors, f"note number {n} about gardening")
    associator = Associator(store, vectors, config, batch=2)
    first = associator.run()
    assert first.processed == 2
    assert first.remaining
    assert [associator.run().processed for _ in range(3)] == [2, 1, 0]
