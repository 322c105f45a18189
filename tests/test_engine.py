"""The engine's lifetime: what it shares with other engines in the process, and what it releases on shutdown."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from store_faults import REFUSED, refuse_updates

from hermes_bowerbird.config import Config, load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.types import ItemKind

if TYPE_CHECKING:
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

SCOPE = "profile:default"


@pytest.fixture
def home_config(tmp_path: Path) -> Config:
    return load_config(tmp_path, environ={"BOWERBIRD_LLM_BACKEND": "none"})


def _delete_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_database_recreated_at_the_same_path_does_not_find_the_old_vectors(
    home_config: Config, minilm: LocalEmbedder
) -> None:
    first = Bowerbird(home_config, embedder=minilm, background=False)
    first.remember("My sister Ana lives in Lisbon.", scope=SCOPE)
    first.shutdown()
    _delete_database(home_config.db_path)
    second = Bowerbird(home_config, embedder=minilm, background=False)
    try:
        query = second.vectors.embed_query("Where does my sister Ana live?")
        assert query is not None
        assert second.vectors.search(ItemKind.MEMORY, query, 5) == []
    finally:
        second.shutdown()


def test_a_database_recreated_at_the_same_path_does_not_wait_for_the_old_ones_reindex(
    home_config: Config, minilm: LocalEmbedder
) -> None:
    first = Bowerbird(home_config, embedder=minilm, background=False)
    old_reindex = first.embeddings.indexes.reindex_lock(first.store.path)
    # a reindex of the old database still running on a thread that outlived its shutdown
    with old_reindex:
        first.shutdown()
        _delete_database(home_config.db_path)
        second = Bowerbird(home_config, embedder=minilm, background=False)
        results: list[int] = []
        reindexing = threading.Thread(
            target=lambda: results.append(second.admin.reindex()), daemon=True
        )
        reindexing.start()
        reindexing.join(60)
    try:
        assert results == [0]
    finally:
        second.shutdown()


def test_a_shared_engine_reopened_after_release_does_not_find_the_old_vectors(
    home_config: Config, minilm: LocalEmbedder
) -> None:
    first = Bowerbird.open_shared(home_config, embedder=minilm, background=False)
    first.remember("My sister Ana lives in Lisbon.", scope=SCOPE)
    first.release()
    _delete_database(home_config.db_path)
    second = Bowerbird.open_shared(home_config, embedder=minilm, background=False)
    try:
        assert second is not first
        query = second.vectors.embed_query("Where does my sister Ana live?")
        assert query is not None
        assert second.vectors.search(ItemKind.MEMORY, query, 5) == []
    finally:
        second.release()


def test_an_engine_shutting_down_leaves_the_index_of_another_engine_on_the_same_file(
    home_config: Config, minilm: LocalEmbedder
) -> None:
    first = Bowerbird(home_config, embedder=minilm, background=False)
    second = Bowerbird(home_config, embedder=minilm, background=False)
    memory = first.remember("My sister Ana lives in Lisbon.", scope=SCOPE)
    index = second.vectors.index(ItemKind.MEMORY)
    first.shutdown()
    try:
        assert index is not None
        assert second.vectors.index(ItemKind.MEMORY) is index
        assert memory.id in index
    finally:
        second.shutdown()


# ------------------------------------------------------------------ update goes through the curator


def _live_ids(engine: Bowerbird) -> list[int]:
    return sorted(m.id for m in engine.inspect.list_memories([SCOPE]))


def test_an_update_supersedes_the_old_version(engine: Bowerbird) -> None:
    old = engine.remember("The team deploys on Fridays.", scope=SCOPE)
    new = engine.update(old.id, "The team deploys on Thursdays.", scopes=[SCOPE])
    assert engine.store.memories.require(old.id).superseded_by == new.id
    assert _live_ids(engine) == [new.id]


def test_an_updated_version_is_linked_to_the_entities_it_names(engine: Bowerbird) -> None:
    old = engine.remember("I met someone at the park yesterday.", scope=SCOPE)
    new = engine.update(old.id, "Yesterday I met Tom at Barton Springs.", scopes=[SCOPE])
    names = sorted(e.name for e in engine.inspect.show(new.id, scopes=[SCOPE]).entities)
    assert names == ["Barton Springs", "Tom"]


def test_an_update_to_what_another_memory_says_reinforces_that_memory(engine: Bowerbird) -> None:
    kept = engine.remember("The office is in Porto.", scope=SCOPE)
    old = engine.remember("The office is in Braga.", scope=SCOPE)
    merged = engine.update(old.id, "The office is in Porto.", scopes=[SCOPE])
    assert merged.id == kept.id
    assert engine.store.memories.require(old.id).superseded_by == kept.id
    assert _live_ids(engine) == [kept.id]


def test_an_update_to_the_same_content_keeps_the_memory(engine: Bowerbird) -> None:
    old = engine.remember("The office is in Porto.", scope=SCOPE)
    same = engine.update(old.id, "The office is in Porto.", scopes=[SCOPE])
    assert same.id == old.id
    assert _live_ids(engine) == [old.id]


def test_an_update_whose_supersede_fails_stores_no_new_version(engine: Bowerbird) -> None:
    old = engine.remember("The team deploys on Fridays.", scope=SCOPE)
    refuse_updates(engine.store, "memories", "superseded_by", "supersede refused")
    with pytest.raises(REFUSED, match="supersede refused"):
        engine.update(old.id, "The team deploys on Thursdays.", scopes=[SCOPE])
    assert [m.content for m in engine.inspect.list_memories([SCOPE], current_only=False)] == [
        old.content
    ]
