"""Store helpers used by retrieval: the entity cache stamp and scoped id listing."""

from __future__ import annotations

from pathlib import Path

from hermes_bowerbird.retrieval.candidates import EntityNormCache, ScopeIdCache, SubjectKeyCache
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewEpisode, NewMemory, Provenance, Source


def test_entity_stamp_changes_whenever_entities_or_aliases_change(store_target: Path | str) -> None:
    store = Store.open(store_target)
    stamps = [store.graph.entity_stamp()]
    entity = store.graph.upsert_entity("user:a", "Project Falcon", "project falcon")
    stamps.append(store.graph.entity_stamp())
    store.graph.add_aliases(entity, [("Falcon", "falcon")])
    stamps.append(store.graph.entity_stamp())
    # already known: no change
    store.graph.upsert_entity("user:a", "Project Falcon", "project falcon")
    store.graph.add_aliases(entity, [("Falcon", "falcon")])
    assert store.graph.entity_stamp() == stamps[-1]
    store.db.execute("UPDATE entities SET kind = 'project' WHERE id = ?", (entity,))
    stamps.append(store.graph.entity_stamp())
    store.db.execute(
        "DELETE FROM entities WHERE id = ?", (entity,)
    )  # its alias goes by the cascade
    stamps.append(store.graph.entity_stamp())
    assert len(set(stamps)) == len(stamps)
    store.close()


def test_scoped_ids_after(store_target: Path | str) -> None:
    store = Store.open(store_target)
    ids = [
        store.insert_memory(
            NewMemory(scope=scope, type=MemoryType.FACT, content=f"fact {i}", source=Source.TOOL)
        ).id
        for i, scope in enumerate(["user:a", "user:b", "user:a", "profile:default"])
    ]
    episode = store.episodes.insert(
        NewEpisode(
            scope="user:b",
            session_id="s",
            turn_index=0,
            chunk_index=0,
            role="user",
            content="hello there",
        )
    )
    assert store.search.ids_after(ItemKind.MEMORY, ["user:a", "profile:default"]) == [
        ids[0],
        ids[2],
        ids[3],
    ]
    assert store.search.ids_after(ItemKind.MEMORY, ["user:a"], after_id=ids[0]) == [ids[2]]
    assert store.search.ids_after(ItemKind.EPISODE, ["user:a"]) == []
    assert store.search.ids_after(ItemKind.EPISODE, ["user:b"]) == [episode]
    store.close()


def test_memories_by_subject_lists_current_first_then_history(store_target: Path | str) -> None:
    store = Store.open(store_target)

    def add(content: str, scope: str = "user:a", subject: str = "user:residence") -> int:
        return store.insert_memory(
            NewMemory(
                scope=scope,
                type=MemoryType.IDENTITY,
                content=content,
                source=Source.TOOL,
                subject=subject,
            )
        ).id

    oldest, old, current = add("I live in Porto"), add("I live in Lisbon"), add("I live in Berlin")
    add("I live in Oslo", scope="user:b")
    diet = add("I eat plants", subject="user:diet")
    store.supersede(oldest, old, reason="moved", actor="test")
    store.supersede(old, current, reason="moved", actor="test")
    assert store.memories.by_subject(["user:a"], ["user:residence"]) == [current, old, oldest]
    assert store.memories.by_subject(["user:a"], ["user:residence", "user:diet"], limit=2) == [
        diet,
        current,
    ]
    assert store.memories.by_subject(["user:a"], []) == []
    store.forget(current, reason="wrong", actor="test")
    assert store.memories.by_subject(["user:a"], ["user:residence"]) == [old, oldest]
    store.close()


def test_memories_from_episodes_follows_provenance_within_the_scope(
    store_target: Path | str,
) -> None:
    store = Store.open(store_target)
    mine = store.episodes.insert(
        NewEpisode(
            scope="user:a",
            session_id="s",
            turn_index=3,
            chunk_index=0,
            role="user",
            content="I live in Lisbon",
        )
    )
    quiet = store.episodes.insert(
        NewEpisode(
            scope="user:a", session_id="s", turn_index=4, chunk_index=0, role="user", content="ok"
        )
    )
    memory = store.insert_memory(
        NewMemory(
            scope="user:a",
            type=MemoryType.IDENTITY,
            content="I live in Lisbon",
            source=Source.TURN,
            provenance=(Provenance("s", 3),),
        )
    ).id
    store.insert_memory(
        NewMemory(
            scope="user:b",
            type=MemoryType.FACT,
            content="other scope, same turn ids",
            source=Source.TURN,
            provenance=(Provenance("s", 3),),
        )
    )
    assert store.provenance.memories_from_episodes([mine, quiet]) == {mine: [memory]}
    assert store.provenance.memories_from_episodes([]) == {}
    store.close()


def test_stale_memory_ids_are_the_superseded_and_forgotten_ones(store_target: Path | str) -> None:
    store = Store.open(store_target)
    current, old, new, gone = (
        store.insert_memory(
            NewMemory(scope="user:a", type=MemoryType.FACT, content=text, source=Source.TOOL)
        ).id
        for text in "abcd"
    )
    store.supersede(old, new, reason="changed", actor="test")
    store.forget(gone, reason="wrong", actor="test")
    assert store.memories.stale_ids([current, old, new, gone], now=store.clock()) == {old, gone}
    store.close()


def test_memories_for_entities_lists_live_in_scope_newest_first(store_target: Path | str) -> None:
    store = Store.open(store_target, clock=lambda: 1_800_000_000.0)  # one timestamp: ties
    entity = store.graph.upsert_entity("user:a", "Lisbon", "lisbon")

    def add(scope: str) -> int:
        memory = store.insert_memory(
            NewMemory(
                scope=scope, type=MemoryType.FACT, content=f"Lisbon {scope}", source=Source.TOOL
            )
        )
        store.graph.link_memory_entities(memory.id, [entity])
        return memory.id

    first, _other_scope, forgotten, last = (
        add("user:a"),
        add("user:b"),
        add("user:a"),
        add("user:a"),
    )
    store.forget(forgotten, actor="test", reason="test")
    assert store.graph.memories_for_entities([entity], ["user:a"]) == [
        (last, entity),
        (first, entity),
    ]
    store.close()


def test_full_text_finds_a_scopes_matches_below_many_better_ones_of_another_scope(
    store_target: Path | str,
) -> None:
    store = Store.open(store_target)

    def add(scope: str, content: str) -> int:
        new = NewMemory(scope=scope, type=MemoryType.FACT, content=content, source=Source.TOOL)
        return store.insert_memory(new).id

    for i in range(12):  # the index's best matches all belong to someone else
        add("user:b", f"Falcon falcon falcon, note {i}")
    mine = [add("user:a", "Project Falcon ships in May"), add("user:a", "Falcon review on Friday")]
    found = store.search.memories('"falcon"', ["user:a"], limit=2)
    assert sorted(memory_id for memory_id, _ in found) == mine
    store.close()


def test_full_text_ranks_the_best_matches_of_a_scope_first(store_target: Path | str) -> None:
    store = Store.open(store_target)
    weak, strong = (
        store.insert_memory(
            NewMemory(scope="user:a", type=MemoryType.FACT, content=text, source=Source.TOOL)
        ).id
        for text in ("Falcon review on Friday with the whole team", "Falcon falcon")
    )
    assert [i for i, _ in store.search.memories('"falcon"', ["user:a"], limit=5)] == [strong, weak]
    store.close()


def test_entity_names_are_reloaded_after_a_purge_reuses_an_id(tmp_path: Path) -> None:
    """A purged name stops naming anything, and a new entity given the freed id is found by its own name (SQLite
    gives a freed highest id out again; a server's identity never does)."""
    store = Store.open(tmp_path / "m.db")
    names = EntityNormCache(store)
    kept = store.graph.upsert_entity("user:a", "Ines", "ines")
    purged = store.graph.upsert_entity("user:a", "Tomasz", "tomasz")
    assert names.norms(["user:a"]) == {"ines": kept, "tomasz": purged}
    store.db.execute("DELETE FROM entities WHERE id = ?", (purged,))
    reused = store.graph.upsert_entity("user:a", "Berlin", "berlin")
    assert reused == purged  # SQLite hands out the freed highest id again
    assert names.norms(["user:a"]) == {"ines": kept, "berlin": reused}
    store.close()


def test_subject_keys_are_read_again_only_when_a_memory_was_added(store_target: Path | str) -> None:
    store = Store.open(store_target)
    keys = SubjectKeyCache(store, ScopeIdCache(store))

    def add(content: str, subject: str) -> None:
        store.memories.insert(
            NewMemory(
                scope="user:a",
                type=MemoryType.FACT,
                content=content,
                source=Source.TOOL,
                subject=subject,
            )
        )

    add("My dentist is Dr Lee.", "user:contact:dentist")
    first = keys.keys(["user:a"])
    assert first == {"user:contact:dentist"}
    assert keys.keys(["user:a"]) is first  # nothing added: no read
    add("I live in Porto.", "user:residence")
    assert keys.keys(["user:a"]) == {"user:contact:dentist", "user:residence"}
    store.close()
