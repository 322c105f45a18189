"""The engine's lifetime: what it shares with other engines in the process, and what it releases on shutdown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_bowerbird.config import Config, load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.types import ItemKind

if TYPE_CHECKING:
    from hermes_bowerbird.embedding import LocalEmbedder

SCOPE = "profile:default"


@pytest.fixture
def home_config(tmp_path: Path) -> Config:
    return load_config(tmp_path, environ={"BOWERBIRD_LLM_BACKEND": "none"})


def _delete_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_database_recreated_at_the_same_path_does_not_find_the_old_vectors(home_config: Config,
                                                                              minilm: LocalEmbedder) -> None:
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


def test_a_shared_engine_reopened_after_release_does_not_find_the_old_vectors(home_config: Config,
                                                                              minilm: LocalEmbedder) -> None:
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
        home_config: Config, minilm: LocalEmbedder) -> None:
    first = Bowerbird(home_config, embedder=minilm, background=False)
    second = Bowerbird(home_config, embedder=minilm, background=False)
    memory = first.remember("My sister Ana lives in Lisbon.", scope=SCOPE)
    index = second.vectors.index(ItemKind.MEMORY)
    first.shutdown()
    try:
        assert second.vectors.index(ItemKind.MEMORY) is index
        assert memory.id in index
    finally:
        second.shutdown()
