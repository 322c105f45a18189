"""Tests for the embedders (real MiniLM, Gemini against a local stub), the cache, selection and reindex."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gemini_stub import GeminiStub
from store_rows import stored_vectors

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.embeddings.cache import CachedEmbedder, WrappedEmbedder, cache_key
from hermes_bowerbird.embeddings.gemini import GeminiEmbedder, GeminiEmbeddingSettings
from hermes_bowerbird.embeddings.local import (
    MINILM_LABEL,
    LoadedModels,
    batches,
    resolve_local_model,
)
from hermes_bowerbird.embeddings.reindex import reindex
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.errors import EmbeddingError
from hermes_bowerbird.store import Store
from hermes_bowerbird.types import Embedder, ItemKind, MemoryType, NewEpisode, NewMemory, Source

FAST_RETRY: dict[str, Any] = {
    "attempts": 3,
    "backoff_initial": 0.01,
    "backoff_max": 0.02,
    "timeout": 5.0,
}


class CountingEmbedder(WrappedEmbedder):
    """Implements the Embedder protocol around another one and counts what reaches it."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.calls = 0
        self.texts: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts.extend(texts)
        return self.inner.embed_batch(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        self.texts.append(text)
        return super().embed_query(text)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "memory.db")
    yield opened
    opened.close()


def make_config(tmp_path: Path, **values: Any) -> Config:
    return build_config(tmp_path, values)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# ----- the local model -------------------------------------------------------------------------------------

PARAPHRASES = [
    (
        "My daughter's name is Alice.",
        "I have a kid called Alice.",
        "The quarterly report is due on Friday.",
    ),
    (
        "I prefer dark roast coffee in the morning.",
        "In the mornings I like strong dark coffee.",
        "The database migration failed on the staging server.",
    ),
    (
        "We decided to deploy with Kubernetes.",
        "The team chose Kubernetes for deployment.",
        "My grandmother grows tomatoes in her garden.",
    ),
    (
        "I'm allergic to peanuts.",
        "Peanuts give me an allergic reaction.",
        "The train to Berlin leaves at nine.",
    ),
]


@pytest.mark.parametrize("text, paraphrase, unrelated", PARAPHRASES)
def test_paraphrases_score_above_unrelated_text(
    minilm: LocalEmbedder, text: str, paraphrase: str, unrelated: str
) -> None:
    a, b, c = minilm.embed_batch([text, paraphrase, unrelated])
    assert cosine(a, b) > cosine(a, c) + 0.2


def test_local_vectors_are_unit_float32_and_batch_matches_single(minilm: LocalEmbedder) -> None:
    batch = minilm.embed_batch(["hello world", "another sentence"])
    assert batch.dtype == np.float32 and batch.shape == (2, 384) == (2, minilm.dimension)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert np.allclose(minilm.embed("hello world"), batch[0], atol=1e-5)
    assert minilm.embed_batch([]).shape == (0, 384)
    assert minilm.model_name == MINILM_LABEL and minilm.is_local


def test_model_calls_hold_texts_of_similar_length_up_to_a_padded_size() -> None:
    lengths = [400, 20, 30, 450, 25, 120, 110]
    calls = batches(lengths, most=3, padded=500)
    assert sorted(i for call in calls for i in call) == list(range(len(lengths)))
    assert [[lengths[i] for i in call] for call in calls] == [
        [20, 25, 30],
        [110, 120],
        [400],
        [450],
    ]
    assert batches([900], most=16, padded=500) == [
        [0]
    ]  # a text longer than the budget still goes alone
    assert batches([], most=16) == []


def test_long_and_short_texts_embed_as_they_do_alone(minilm: LocalEmbedder) -> None:
    texts = [
        "short one",
        "a rather longer sentence about the garden " * 12,
        "tiny",
        "mid-length text here",
    ]
    together = minilm.embed_batch(texts)
    for text, vector in zip(texts, together, strict=True):
        assert np.allclose(minilm.embed(text), vector, atol=1e-5)


def test_a_second_embedder_reuses_the_loaded_model(minilm: LocalEmbedder) -> None:
    started = time.perf_counter()
    again = LocalEmbedder()
    assert time.perf_counter() - started < 2.0  # a real load takes seconds
    assert np.allclose(again.embed("same text"), minilm.embed("same text"))


class CountingLoader:
    """Stands in for a model load: hands out a new object per call and counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        return object()


def test_loaded_models_load_each_location_once() -> None:
    models, load = LoadedModels(), CountingLoader()
    first = models.get("torch", "/models/a", load)
    assert models.get("torch", "/models/a", load) is first
    assert load.calls == 1


def test_loaded_models_keep_runtimes_apart() -> None:
    models, load = LoadedModels(), CountingLoader()
    torch_model = models.get("torch", "/models/a", load)
    assert models.get("onnx-int8", "/models/a", load) is not torch_model


def test_cleared_models_are_loaded_afresh() -> None:
    models, load = LoadedModels(), CountingLoader()
    before = models.get("torch", "/models/a", load)
    models.clear()
    assert models.get("torch", "/models/a", load) is not before


@pytest.mark.parametrize(
    "configured, label, offline",
    [
        ("", MINILM_LABEL, True),
        ("sentence-transformers/all-MiniLM-L6-v2", MINILM_LABEL, True),
        ("some-org/some-model", "some-org/some-model", False),
    ],
)
def test_model_resolution_order(configured: str, label: str, offline: bool) -> None:
    source = resolve_local_model(configured)
    assert (source.label, source.offline) == (label, offline)


def test_a_missing_configured_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="does not exist"):
        LocalEmbedder(str(tmp_path / "no-such-model"))


# ----- the cache -------------------------------------------------------------------------------------------


def test_cache_hits_avoid_the_model(minilm: LocalEmbedder, store: Store) -> None:
    counting = CountingEmbedder(minilm)
    cached = CachedEmbedder(counting, store)
    first = cached.embed_batch(["alpha fact", "beta fact", "alpha fact"])
    assert counting.calls == 1 and counting.texts == ["alpha fact", "beta fact"]
    assert np.allclose(first[0], first[2])
    second = cached.embed_batch(["beta fact", "gamma fact", "alpha fact"])
    assert counting.calls == 2 and counting.texts[2:] == ["gamma fact"]
    assert np.allclose(second[0], first[1], atol=1e-6) and np.allclose(
        second[2], first[0], atol=1e-6
    )
    fresh = CountingEmbedder(minilm)
    CachedEmbedder(fresh, store).embed("gamma fact")  # persistent: a new wrapper still hits
    assert fresh.calls == 0


def test_a_local_query_is_kept_in_memory_not_in_the_store(
    minilm: LocalEmbedder, store: Store
) -> None:
    counting = CountingEmbedder(minilm)
    cached = CachedEmbedder(counting, store)
    first = cached.embed_query("where did I park the car")
    again = cached.embed_query("where did I park the car")
    assert counting.calls == 1
    assert np.allclose(first, again)
    assert (
        store.embedding_cache.get([cache_key(minilm.model_name, "where did I park the car")]) == {}
    )


def test_a_query_vector_equals_the_document_vector_of_the_same_text(
    minilm: LocalEmbedder, store: Store
) -> None:
    cached = CachedEmbedder(minilm, store)
    assert np.allclose(
        cached.embed_query("my sister lives in Lyon"),
        cached.embed("my sister lives in Lyon"),
        atol=1e-6,
    )


def test_cache_is_keyed_by_model(store: Store) -> None:
    assert cache_key("m1", "text") != cache_key("m2", "text")
    assert cache_key("m1", "text") == cache_key("m1", "text")


# ----- reindex ---------------------------------------------------------------------------------------------


def add_memories(store: Store, texts: Sequence[str]) -> list[int]:
    return [
        store.insert_memory(
            NewMemory(scope="u", type=MemoryType.FACT, content=t, source=Source.TOOL)
        ).id
        for t in texts
    ]


FACTS = [
    "The user's cat is called Miso.",
    "The user works as a nurse in Leeds.",
    "The user is learning to play the cello.",
    "The user's favourite food is ramen.",
]


def test_reindex_embeds_missing_items_with_progress(minilm: LocalEmbedder, store: Store) -> None:
    ids = add_memories(store, FACTS)
    seen: list[tuple[int, int]] = []
    assert (
        reindex(store, minilm, ItemKind.MEMORY, lambda d, t: seen.append((d, t)), batch_size=3) == 4
    )
    assert seen == [(3, 4), (4, 4)]
    assert store.vectors.model_counts() == {("memory", MINILM_LABEL, 384): 4}
    assert reindex(store, minilm, ItemKind.MEMORY) == 0
    loaded_ids, matrix = store.vectors.load(ItemKind.MEMORY, MINILM_LABEL, 384)
    assert list(loaded_ids) == ids and matrix.shape == (4, 384)


def test_dimension_mismatch_triggers_background_reindex(
    minilm: LocalEmbedder, store: Store
) -> None:
    ids = add_memories(store, FACTS)
    old = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    # same name, wrong dim
    store.vectors.put(ItemKind.MEMORY, MINILM_LABEL, list(zip(ids, old, strict=True)))
    counting = CountingEmbedder(minilm)
    service = EmbeddingService.from_embedder(counting, store)
    service.start()
    assert service.wait_idle(60)
    assert store.vectors.model_counts() == {("memory", MINILM_LABEL, 384): 4}
    assert service.status()["reindex"] == {"kind": "memory", "done": 4, "total": 4}
    embedder = service.current()
    assert embedder is not None
    index = service.indexes.get(
        store.path,
        "memory",
        MINILM_LABEL,
        384,
        lambda: store.vectors.load(ItemKind.MEMORY, MINILM_LABEL, 384),
    )
    hits = index.search(embedder.embed("what instrument is the user practising?"), 1)
    assert hits[0][0] == ids[2]


def test_model_change_reindexes_everything(minilm: LocalEmbedder, store: Store) -> None:
    ids = add_memories(store, FACTS[:2])
    store.vectors.put(ItemKind.MEMORY, "old-model", [(i, np.ones(384, np.float32)) for i in ids])
    episode = store.episodes.insert(
        NewEpisode(
            scope="u",
            session_id="s",
            turn_index=0,
            chunk_index=0,
            role="user",
            content="I just got back from Lisbon.",
        )
    )
    assert reindex(store, minilm, ItemKind.MEMORY) == 2
    assert reindex(store, minilm, ItemKind.EPISODE) == 1
    counts = store.vectors.model_counts()
    assert counts == {("memory", MINILM_LABEL, 384): 2, ("episode", MINILM_LABEL, 384): 1}
    assert episode in stored_vectors(store, ItemKind.EPISODE, [episode])


# ----- Gemini against the stub --------------------------------------------------------------------------------


@pytest.fixture
def stub() -> Iterator[GeminiStub]:
    with GeminiStub(api_key="good-key", dim=32) as running:
        yield running


def gemini(stub: GeminiStub, key: str = "good-key", **options: Any) -> GeminiEmbedder:
    return GeminiEmbedder(
        GeminiEmbeddingSettings(key, base_url=stub.url, dimension=32, **{**FAST_RETRY, **options})
    )


def test_gemini_success_is_batched_and_normalised(stub: GeminiStub) -> None:
    embedder = gemini(stub)
    texts = [f"text {i}" for i in range(150)]
    matrix = embedder.embed_batch(texts)
    assert matrix.shape == (150, 32) and matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert stub.count("batchEmbedContents") == 2  # 100 + 50
    assert np.allclose(embedder.embed("text 3"), matrix[3], atol=1e-6)
    assert not embedder.is_local and embedder.model_name == "gemini-embedding-001/32"


@pytest.mark.parametrize("status", [429, 503])
def test_gemini_retries_transient_errors_then_succeeds(stub: GeminiStub, status: int) -> None:
    stub.fail_next(2, status=status)
    vector = gemini(stub).embed("hello")
    assert vector.shape == (32,) and stub.count() == 3


def test_gemini_persistent_server_error_is_a_clear_error(stub: GeminiStub) -> None:
    stub.fail_always(500)
    with pytest.raises(EmbeddingError, match=r"after 3 attempts.*500"):
        gemini(stub).embed("hello")
    assert stub.count() == 3


@pytest.mark.parametrize("bad_key_status", [401, 403])
def test_gemini_bad_key_fails_at_once_without_retry(bad_key_status: int) -> None:
    with GeminiStub(api_key="good-key", dim=32, bad_key_status=bad_key_status) as running:
        with pytest.raises(EmbeddingError, match="rejected the API key"):
            gemini(running, key="wrong-key").embed("hello")
        assert running.count() == 1


def test_gemini_other_client_errors_are_not_retried(stub: GeminiStub) -> None:
    stub.fail_next(1, status=400, message="bad request")
    with pytest.raises(EmbeddingError, match="request failed"):
        gemini(stub).embed("hello")
    assert stub.count() == 1


def test_gemini_timeouts_are_retried(stub: GeminiStub) -> None:
    stub.delay_seconds = 0.5
    with pytest.raises(EmbeddingError, match="after 2 attempts"):
        gemini(stub, attempts=2, timeout=0.1).embed("slow")
    assert stub.count() == 2


def test_gemini_needs_a_key() -> None:
    with pytest.raises(EmbeddingError, match="API key"):
        GeminiEmbedder(GeminiEmbeddingSettings(""))


# ----- selection -------------------------------------------------------------------------------------------


def test_none_backend_is_disabled_and_says_so(tmp_path: Path) -> None:
    service = EmbeddingService(make_config(tmp_path, embedding_backend="none"))
    service.start()
    assert not service.wait_ready(1)
    status = service.status()
    assert service.current() is None
    assert status["state"] == "disabled" and status["backend"] == "none"
    assert "keywords" in str(status["reason"])


def test_auto_without_model_or_key_is_unavailable_with_a_reason(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, embedding_model=str(tmp_path / "missing-model"), gemini_api_key=""
    )
    service = EmbeddingService(config)
    service.start()
    assert not service.wait_ready(30)
    status = service.status()
    assert service.current() is None
    assert (status["state"], status["backend"], status["model"]) == ("unavailable", "none", None)
    assert "missing-model" in str(status["reason"]) and "GEMINI_API_KEY" in str(status["reason"])


def test_auto_falls_back_to_gemini_when_a_key_is_set(
    tmp_path: Path, stub: GeminiStub, store: Store
) -> None:
    config = make_config(
        tmp_path,
        embedding_model=str(tmp_path / "missing-model"),
        gemini_api_key="good-key",
        gemini_base_url=stub.url,
    )
    service = EmbeddingService(
        config,
        store,
        gemini=GeminiEmbeddingSettings.from_config(config, **FAST_RETRY, dimension=32),
    )
    service.start()
    assert service.wait_ready(30)
    embedder = service.current()
    assert embedder is not None and embedder.dimension == 32
    assert service.status()["backend"] == "gemini" and "local model unavailable" in str(
        service.status()["reason"]
    )
    embedder.embed("cached once")
    embedder.embed("cached once")
    assert stub.count("batchEmbedContents") == 1


def test_gemini_backend_without_key_is_unavailable(tmp_path: Path) -> None:
    service = EmbeddingService(make_config(tmp_path, embedding_backend="gemini", gemini_api_key=""))
    service.start()
    assert not service.wait_ready(10)
    assert service.status()["state"] == "unavailable" and "GEMINI_API_KEY" in str(
        service.status()["reason"]
    )


def test_local_backend_loads_in_the_background(
    tmp_path: Path, minilm: LocalEmbedder, store: Store
) -> None:
    service = EmbeddingService(make_config(tmp_path, embedding_backend="torch"), store)
    started = time.perf_counter()
    service.start()
    assert time.perf_counter() - started < 2.0  # loading runs on its own thread
    assert service.status()["state"] in ("loading", "ready")
    assert service.wait_ready(60)
    status = service.status()
    assert (status["state"], status["backend"], status["model"], status["dimension"]) == (
        "ready",
        "local",
        MINILM_LABEL,
        384,
    )
    embedder = service.current()
    assert embedder is not None
    assert np.allclose(embedder.embed("a sentence"), minilm.embed("a sentence"), atol=1e-5)
    service.stop()


def test_a_hosts_indexes_are_loaded_once_the_model_is_ready_not_at_its_first_search(
    minilm: LocalEmbedder, store: Store
) -> None:
    ids = add_memories(store, FACTS)
    vectors = minilm.embed_batch(FACTS)
    store.vectors.put(ItemKind.MEMORY, MINILM_LABEL, list(zip(ids, vectors, strict=True)))
    # a host whose curation worker embeds what is new: no reindex of its own, and no search yet
    service = EmbeddingService.from_embedder(minilm, store, auto_reindex=False)
    assert service.indexes.peek(store.path, "memory", MINILM_LABEL) is None
    service.start()
    assert service.wait_idle(60)
    index = service.indexes.peek(store.path, "memory", MINILM_LABEL)
    assert index is not None and len(index) == len(FACTS)
