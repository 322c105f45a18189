"""A store whose vectors another model made: said loudly (a warning, the status), recall by keywords and the graph
instead of comparing across models, and `bowerbird reindex` replacing the vectors in place, resumably."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hermes_homes import KEYWORD_ONLY

from hermes_bowerbird.cli import cli
from hermes_bowerbird.config import load_config
from hermes_bowerbird.embeddings.index import IndexRegistry
from hermes_bowerbird.embeddings.reindex import reindex, reindex_all
from hermes_bowerbird.embeddings.service import EmbeddingService, EmbeddingState
from hermes_bowerbird.embeddings.tier import VectorTier
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Source

OLD = "old-model"
FACTS = [
    "The user's cat is called Miso.",
    "The user works as a nurse in Leeds.",
    "The user is learning to play the cello.",
    "The user's favourite food is ramen.",
    "The user moved to Porto last month.",
]


@pytest.fixture(scope="module")
def tiny(tiny_model: Path) -> LocalEmbedder:
    return LocalEmbedder(str(tiny_model))


def old_store(path: Path, dim: int = 384) -> tuple[Store, list[int]]:
    """A store whose memories all have vectors from another model, of another dimension."""
    store = Store.open(path)
    ids = [
        store.insert_memory(
            NewMemory(scope="u", type=MemoryType.FACT, content=t, source=Source.TOOL)
        ).id
        for t in FACTS
    ]
    rng = np.random.default_rng(0)
    store.vectors.put(
        ItemKind.MEMORY, OLD, [(i, rng.standard_normal(dim).astype(np.float32)) for i in ids]
    )
    return store, ids


def test_another_models_vectors_are_reported_and_never_searched(
    tiny: LocalEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store, ids = old_store(tmp_path / "m.db")
    with caplog.at_level(logging.WARNING, logger="hermes_bowerbird"):
        service = EmbeddingService.from_embedder(tiny, store, auto_reindex=False)
    status = service.status()
    assert status["state"] == str(EmbeddingState.OTHER_MODEL)
    assert status["other_models"] == {f"{OLD} (384 dimensions)": len(ids)}
    assert "bowerbird reindex" in str(status["reason"])
    assert [r.levelno for r in caplog.records if OLD in r.getMessage()] == [logging.WARNING]
    tier = VectorTier(store, service)
    assert service.current() is None and service.loaded() is not None
    assert tier.embed_query("where does the user live?") is None  # search goes on by keywords
    assert tier.add(ItemKind.MEMORY, [(ids[0], FACTS[0])]) == 0  # left for the reindex
    store.close()


def test_reindex_replaces_the_vectors_in_place_and_vectors_come_back(
    tiny: LocalEmbedder, tmp_path: Path
) -> None:
    store, ids = old_store(tmp_path / "m.db")
    service = EmbeddingService.from_embedder(tiny, store, auto_reindex=False)
    tier = VectorTier(store, service)
    seen: list[tuple[int, int]] = []
    assert tier.catch_up(lambda done, total: seen.append((done, total))) == len(ids)
    assert seen[-1] == (len(ids), len(ids))
    assert store.vectors.model_counts() == {("memory", tiny.model_name, tiny.dimension): len(ids)}
    assert service.status()["state"] == str(EmbeddingState.READY)
    assert service.status()["other_models"] == {}
    query = tier.embed_query("which instrument?")
    assert query is not None
    assert {item for item, _ in tier.search(ItemKind.MEMORY, query, 10)} == set(ids)
    store.close()


def test_an_interrupted_reindex_mixes_nothing_and_resumes(
    tiny: LocalEmbedder, tmp_path: Path
) -> None:
    store, _ids = old_store(tmp_path / "m.db")
    stop = threading.Event()
    done = reindex(store, tiny, ItemKind.MEMORY, lambda d, t: stop.set(), batch_size=2, stop=stop)
    assert done == 2
    counts = store.vectors.model_counts()
    assert counts == {("memory", OLD, 384): 3, ("memory", tiny.model_name, tiny.dimension): 2}
    # searches of either model see only their own vectors
    assert store.vectors.load(ItemKind.MEMORY, tiny.model_name, tiny.dimension)[1].shape == (2, 32)
    assert store.vectors.load(ItemKind.MEMORY, OLD, 384)[1].shape == (3, 384)
    service = EmbeddingService.from_embedder(tiny, store, auto_reindex=False)
    assert service.current() is None  # still another model's vectors in the store
    assert reindex_all(store, tiny, IndexRegistry(), ann_threshold=1000) == 3  # only the rest
    service.check_store()
    assert service.current() is not None
    store.close()


def test_the_same_name_with_another_dimension_is_another_model(
    tiny: LocalEmbedder, tmp_path: Path
) -> None:
    store = Store.open(tmp_path / "m.db")
    item = store.insert_memory(
        NewMemory(scope="u", type=MemoryType.FACT, content=FACTS[0], source=Source.TOOL)
    ).id
    store.vectors.put(ItemKind.MEMORY, tiny.model_name, [(item, np.ones(8, np.float32))])
    service = EmbeddingService.from_embedder(tiny, store, auto_reindex=False)
    assert service.status()["other_models"] == {f"{tiny.model_name} (8 dimensions)": 1}
    store.close()


def test_the_background_reindex_brings_vectors_back(tiny: LocalEmbedder, tmp_path: Path) -> None:
    store, ids = old_store(tmp_path / "m.db")
    service = EmbeddingService.from_embedder(tiny, store)
    assert service.current() is None
    service.start()
    assert service.wait_idle(60)
    assert service.current() is not None
    assert store.vectors.model_counts() == {("memory", tiny.model_name, tiny.dimension): len(ids)}
    store.close()


def test_recall_goes_by_keywords_while_the_models_differ(
    tiny: LocalEmbedder, tmp_path: Path
) -> None:
    config = load_config(tmp_path, environ=KEYWORD_ONLY)
    store, _ids = old_store(config.db_path)
    store.close()
    engine = Bowerbird(config, embedder=tiny, background=False)
    try:
        assert engine.status()["embedding"]["state"] == str(EmbeddingState.OTHER_MODEL)  # type: ignore[index]
        hits = engine.recall("cello", scopes=("u",))
        assert [h.content for h in hits][:1] == [FACTS[2]]
        assert hits and not any("vector" in name for h in hits for name in h.signals)
    finally:
        engine.shutdown()


def run(home: Path, tiny_model: Path, *args: str) -> Result:
    env = {
        **KEYWORD_ONLY,
        "BOWERBIRD_EMBEDDING_BACKEND": "torch",
        "BOWERBIRD_EMBEDDING_MODEL": str(tiny_model),
    }
    return CliRunner().invoke(
        cli, ["--hermes-home", str(home), "--json", *args], env=env, catch_exceptions=False
    )


def data(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["data"]


def test_the_command_line_says_so_and_reindexes(tiny_model: Path, tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    ids = [int(data(run(home, tiny_model, "remember", fact))["memory"]["id"]) for fact in FACTS]
    store = Store.open(Path(data(run(home, tiny_model, "status"))["db_path"]))
    old = np.random.default_rng(0).standard_normal((len(ids), 384)).astype(np.float32)
    store.vectors.put(ItemKind.MEMORY, OLD, list(zip(ids, old, strict=True)))
    store.close()
    before = data(run(home, tiny_model, "status"))["embedding"]
    assert before["planned_model"] == tiny_model.name
    assert before["other_models"] == {f"{OLD} (384 dimensions)": len(ids)}
    hits = data(run(home, tiny_model, "recall", "cello"))["results"]
    assert [h["content"] for h in hits][:1] == [
        FACTS[2]
    ]  # by keyword: no vector compared, none replaced
    done = data(run(home, tiny_model, "reindex"))
    assert done["embedded"] == len(ids) and done["other_models"] == {}
    after = data(run(home, tiny_model, "status"))
    assert after["embedding"]["other_models"] == {}
    # every stored vector, the memories' and their questions', is the configured model's
    assert f"memory/{tiny_model.name}/32" in after["vector_models"]
    assert all(key.endswith(f"/{tiny_model.name}/32") for key in after["vector_models"])


def test_a_reindex_elsewhere_brings_vectors_back_without_a_search_waiting(
    tiny: LocalEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_bowerbird.embeddings import service as service_module

    monkeypatch.setattr(service_module, "RECHECK_SECONDS", 0.0)
    store, _ids = old_store(tmp_path / "m.db")
    service = EmbeddingService.from_embedder(tiny, store, auto_reindex=False)
    assert service.current() is None
    reindex_all(store, tiny, IndexRegistry(), ann_threshold=1000)  # as `bowerbird reindex` does
    deadline = time.monotonic() + 10
    while service.current() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert service.current() is not None
    assert service.status()["state"] == str(EmbeddingState.READY)
    store.close()
