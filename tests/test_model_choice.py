"""Choosing the embedding model: any sentence-transformers model by path, its query and document prompts under both
local runtimes, the pooling the ONNX runtime reproduces, and torch when it cannot."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_bowerbird.config import build_config
from hermes_bowerbird.embeddings.local import Prompts, choose_prompts, read_prompts
from hermes_bowerbird.embeddings.onnx_runtime import RUNTIME, OnnxEmbedder, read_layout
from hermes_bowerbird.embeddings.service import EmbeddingService, planned_runtime
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.errors import EmbeddingError
from hermes_bowerbird.store import Store

TEXTS = ["where do I live now?", "I moved to Porto last month", "my cat is called miso", "tea"]
BGE_QUERY = "Represent this sentence for searching relevant passages: "


@pytest.mark.parametrize(
    ("prompts", "default", "expected"),
    [
        ({"query": "query: ", "passage": "passage: "}, None, Prompts("query: ", "passage: ")),
        ({"query": BGE_QUERY}, None, Prompts(BGE_QUERY, "")),
        ({"query": "q: ", "document": "d: ", "passage": "p: "}, None, Prompts("q: ", "d: ")),
        ({"corpus": "c: "}, None, Prompts("", "c: ")),
        ({"retrieval": "r: ", "query": "q: "}, "retrieval", Prompts("q: ", "r: ")),
        ({"query": "", "document": ""}, None, Prompts()),
        ({}, None, Prompts()),
    ],
)
def test_prompts_are_chosen_as_sentence_transformers_chooses_them(
    prompts: dict[str, str], default: str | None, expected: Prompts
) -> None:
    assert choose_prompts(prompts, default) == expected


def test_a_saved_models_prompts_are_read_from_its_folder(tiny_model: Path) -> None:
    assert read_prompts(str(tiny_model)) == Prompts("query: ", "passage: ")


def test_a_model_without_a_sentence_transformers_config_has_no_prompts(tmp_path: Path) -> None:
    assert read_prompts(str(tmp_path)) == Prompts()


@pytest.fixture(scope="module")
def plain_twin(tiny_model: Path) -> LocalEmbedder:
    """The same weights as `tiny_model`, saved without prompts: what the prompted model's texts look like."""
    from tiny_models import write_tiny_embedder

    return LocalEmbedder(str(write_tiny_embedder(tiny_model.parent / "tiny-plain", prompts={})))


@pytest.fixture(scope="module")
def tiny_torch(tiny_model: Path) -> LocalEmbedder:
    return LocalEmbedder(str(tiny_model))


@pytest.fixture(scope="module")
def tiny_onnx(tiny_model: Path, tiny_model_build: Path) -> OnnxEmbedder:
    return OnnxEmbedder(tiny_model_build.parent.parent, str(tiny_model))


def test_torch_embeds_queries_with_the_query_prompt(
    tiny_torch: LocalEmbedder, plain_twin: LocalEmbedder
) -> None:
    queries = np.stack([tiny_torch.embed_query(t) for t in TEXTS])
    expected = plain_twin.embed_batch([f"query: {t}" for t in TEXTS])
    assert np.allclose(queries, expected, atol=1e-5)


def test_torch_embeds_stored_texts_with_the_document_prompt(
    tiny_torch: LocalEmbedder, plain_twin: LocalEmbedder
) -> None:
    expected = plain_twin.embed_batch([f"passage: {t}" for t in TEXTS])
    assert np.allclose(tiny_torch.embed_batch(TEXTS), expected, atol=1e-5)


def test_a_query_and_a_stored_text_of_the_same_words_differ_under_prompts(
    tiny_torch: LocalEmbedder,
) -> None:
    assert float(np.dot(tiny_torch.embed_query(TEXTS[1]), tiny_torch.embed(TEXTS[1]))) < 0.99


@pytest.mark.parametrize("side", ["query", "document"])
def test_the_int8_build_agrees_with_torch_on_each_side(
    tiny_onnx: OnnxEmbedder, tiny_torch: LocalEmbedder, side: str
) -> None:
    def vectors(embedder: Any) -> np.ndarray:
        if side == "query":
            return np.stack([embedder.embed_query(t) for t in TEXTS])
        return np.asarray(embedder.embed_batch(TEXTS))

    assert (vectors(tiny_onnx) * vectors(tiny_torch)).sum(axis=1).min() > 0.999


def test_the_int8_build_cuts_long_texts_where_the_model_does(
    tiny_onnx: OnnxEmbedder, tiny_torch: LocalEmbedder
) -> None:
    # far past the tiny model's 64 tokens (saved as the tokenizer's model_max_length) and its 128 positions
    long = [" ".join(TEXTS * 30), "tea " * 400]
    together = (np.asarray(tiny_onnx.embed_batch(long)) * tiny_torch.embed_batch(long)).sum(axis=1)
    assert together.min() > 0.999


def test_the_int8_build_keeps_the_models_name_and_dimension(tiny_onnx: OnnxEmbedder) -> None:
    assert (tiny_onnx.model_name, tiny_onnx.dimension, tiny_onnx.prompts) == (
        "tiny-e5",
        32,
        Prompts("query: ", "passage: "),
    )


@pytest.mark.slow
def test_a_first_token_pooling_model_runs_as_int8_like_under_torch(
    tmp_path_factory: pytest.TempPathFactory, models_dir: Path
) -> None:
    """bge-style models pool by the first token ([CLS]) and prompt only their queries."""
    from tiny_models import write_tiny_embedder

    folder = write_tiny_embedder(
        tmp_path_factory.mktemp("tiny") / "tiny-bge", prompts={"query": BGE_QUERY}, pooling="cls"
    )
    int8, torch = OnnxEmbedder(models_dir, str(folder)), LocalEmbedder(str(folder))
    assert read_layout(str(folder)).pooling == "cls"
    assert (int8.embed_batch(TEXTS) * torch.embed_batch(TEXTS)).sum(axis=1).min() > 0.999
    assert float(np.dot(int8.embed_query(TEXTS[0]), torch.embed_query(TEXTS[0]))) > 0.999


@pytest.fixture(scope="module")
def models_dir() -> Path:
    import os

    return Path(os.environ["BOWERBIRD_EMBEDDING_MODELS_DIR"])


@pytest.fixture(scope="module")
def max_pooled(tiny_model: Path) -> Path:
    """A model pooled by the maximum over tokens, which the ONNX runtime does not reproduce."""
    from tiny_models import write_tiny_embedder

    return write_tiny_embedder(tiny_model.parent / "tiny-max", pooling="max")


def test_a_pooling_the_int8_runtime_cannot_reproduce_is_refused_by_name(max_pooled: Path) -> None:
    with pytest.raises(EmbeddingError, match="pools by max"):
        read_layout(str(max_pooled))


def test_such_a_model_runs_under_torch_with_a_log_line_saying_why(
    tmp_path: Path, max_pooled: Path, models_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = build_config(
        tmp_path,
        {"embedding_model": str(max_pooled), "embedding_models_dir": str(models_dir)},
    )
    store = Store.open(tmp_path / "memory.db")
    service = EmbeddingService(config, store)
    with caplog.at_level(logging.WARNING, logger="hermes_bowerbird.embeddings.service"):
        service.start()
        assert service.wait_ready(120)
    service.stop()
    store.close()
    assert service.status()["runtime"] == "torch"
    assert service.status()["model"] == "tiny-max"
    assert any(
        "onnx unavailable" in r.message and "pools by max" in r.message for r in caplog.records
    )


def test_the_planned_runtime_names_why_int8_cannot_run(tmp_path: Path, max_pooled: Path) -> None:
    config = build_config(tmp_path, {"embedding_model": str(max_pooled)})
    assert planned_runtime(config).startswith("torch (the ONNX runtime pools by token mean")


@pytest.mark.parametrize("backend", ["auto", "onnx", "torch"])
def test_the_service_runs_a_chosen_model_under_each_runtime(
    tmp_path: Path, tiny_model: Path, tiny_model_build: Path, backend: str
) -> None:
    config = build_config(
        tmp_path,
        {
            "embedding_model": str(tiny_model),
            "embedding_backend": backend,
            "embedding_models_dir": str(tiny_model_build.parent.parent),
        },
    )
    store = Store.open(tmp_path / "memory.db")
    service = EmbeddingService(config, store)
    service.start()
    assert service.wait_ready(120)
    service.stop()
    store.close()
    status = service.status()
    assert (status["model"], status["dimension"], status["runtime"]) == (
        "tiny-e5",
        32,
        "torch" if backend == "torch" else RUNTIME,
    )


def test_the_vector_tier_stores_passages_and_searches_with_queries(
    tmp_path: Path, tiny_torch: LocalEmbedder
) -> None:
    from hermes_bowerbird.embeddings.tier import VectorTier
    from hermes_bowerbird.types import ItemKind, MemoryType, NewMemory, Source

    store = Store.open(tmp_path / "memory.db")
    tier = VectorTier(store, EmbeddingService.from_embedder(tiny_torch, store))
    memory_id = store.insert_memory(
        NewMemory(scope="u", type=MemoryType.FACT, content=TEXTS[1], source=Source.TOOL)
    ).id
    tier.add(ItemKind.MEMORY, [(memory_id, TEXTS[1])])
    query = tier.embed_query(TEXTS[0])
    stored = tier.vectors(ItemKind.MEMORY, [memory_id])[memory_id]
    store.close()
    assert query is not None
    assert np.allclose(query, tiny_torch.embed_query(TEXTS[0]), atol=1e-6)
    assert np.allclose(stored, tiny_torch.embed_batch([TEXTS[1]])[0], atol=1e-6)
