"""Store helpers used by retrieval: the entity cache stamp and scoped id listing."""

from __future__ import annotations

from pathlib import Path

from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Source


def test_entity_stamp_changes_when_entities_or_aliases_are_added(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    first = store.entity_stamp()
    entity = store.upsert_entity("user:a", "Project Falcon", "project falcon")
    second = store.entity_stamp()
    store.add_alias(entity, "Falcon", "falcon")
    third = store.entity_stamp()
    store.upsert_entity("user:a", "Project Falcon", "project falcon")  # already known: no change
    assert len({first, second, third}) == 3
    assert store.entity_stamp() == third
    store.close()


def test_scoped_ids_after(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m.db")
    ids = [store.insert_memory(NewMemory(scope=scope, type=MemoryType.FACT, content=f"fact {i}",
                                         source=Source.TOOL)).id
           for i, scope in enumerate(["user:a", "user:b", "user:a", "profile:default"])]
    episode = store.insert_episode(scope="user:b", session_id="s", turn_index=0, chunk_index=0, role="user",
                                   content="hello there")
    assert store.scoped_ids_after(ItemKind.MEMORY, ["user:a", "profile:default"]) == [ids[0], ids[2], ids[3]]
    assert store.scoped_ids_after(ItemKind.MEMORY, ["user:a"], after_id=ids[0]) == [ids[2]]
    assert store.scoped_ids_after(ItemKind.EPISODE, ["user:a"]) == []
    assert store.scoped_ids_after(ItemKind.EPISODE, ["user:b"]) == [episode]
    store.close()
