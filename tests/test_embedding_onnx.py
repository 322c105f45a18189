"""The int8 ONNX runtime: built once from the shipped weights, cached, agreeing with torch, chosen by configuration."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_bowerbird.config import EMBEDDING_BACKENDS, Config, build_config
from hermes_bowerbird.embeddings import onnx_runtime
from hermes_bowerbird.embeddings.local import MINILM_LABEL, resolve_local_model
from hermes_bowerbird.embeddings.onnx_runtime import (
    MODEL_FILE,
    RUNTIME,
    OnnxEmbedder,
    build_dir,
    ensure_built,
)
from hermes_bowerbird.embeddings.service import EmbeddingService, planned_runtime
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.errors import ConfigError, EmbeddingError
from hermes_bowerbird.store import Store

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "demo_conversation.json"


def demo_texts() -> list[str]:
    """Every user and assistant turn of the shipped demo conversation, and its questions."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    texts = [
        turn[role]
        for session in data["sessions"]
        for turn in session["turns"]
        for role in ("user", "assistant")
    ]
    texts += [q["question"] if isinstance(q, dict) else str(q) for q in data["questions"]]
    return [*texts, "hi", "ok thanks", "Where do I live now?"]


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The tests' shared build folder (see conftest): built on the first run, reused by later ones."""
    return Path(os.environ["BOWERBIRD_EMBEDDING_MODELS_DIR"])


@pytest.fixture(scope="session")
def onnx_minilm(models_dir: Path) -> OnnxEmbedder:
    """The int8 build of the shipped MiniLM in `models_dir` (the process may have loaded it from elsewhere first)."""
    source = resolve_local_model()
    ensure_built(models_dir, source.label, source.location)
    return OnnxEmbedder(models_dir)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "memory.db")
    yield opened
    opened.close()


def make_config(tmp_path: Path, models_dir: Path, **values: Any) -> Config:
    return build_config(tmp_path, {"embedding_models_dir": str(models_dir), **values})


# ----- agreement with torch ---------------------------------------------------------------------------------


def test_int8_vectors_agree_with_torch_on_average(
    onnx_minilm: OnnxEmbedder, minilm: LocalEmbedder
) -> None:
    texts = demo_texts()
    cosines = (onnx_minilm.embed_batch(texts) * minilm.embed_batch(texts)).sum(axis=1)
    assert float(cosines.mean()) >= 0.99


def test_int8_vectors_agree_with_torch_on_every_sentence(
    onnx_minilm: OnnxEmbedder, minilm: LocalEmbedder
) -> None:
    texts = [t for t in demo_texts() if len(t.split()) >= 4]
    cosines = (onnx_minilm.embed_batch(texts) * minilm.embed_batch(texts)).sum(axis=1)
    assert float(cosines.min()) >= 0.985


def test_int8_vectors_stay_close_on_one_or_two_word_replies(
    onnx_minilm: OnnxEmbedder, minilm: LocalEmbedder
) -> None:
    texts = [t for t in demo_texts() if len(t.split()) < 4]  # "thanks!" is the worst seen, at 0.967
    cosines = (onnx_minilm.embed_batch(texts) * minilm.embed_batch(texts)).sum(axis=1)
    assert float(cosines.min()) >= 0.95


def test_int8_vectors_are_unit_float32(onnx_minilm: OnnxEmbedder) -> None:
    matrix = onnx_minilm.embed_batch(["one text", "and a second, somewhat longer one"])
    assert matrix.dtype == np.float32 and matrix.shape == (2, 384)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_a_text_embeds_alike_alone_and_in_a_padded_batch(onnx_minilm: OnnxEmbedder) -> None:
    # activations are quantised per batch, so a batch's other texts move a vector a little (never below 0.98)
    texts = [
        "I moved to Porto last month.",
        "a much longer text that forces the short one in its batch to pad " * 3,
    ]
    batch = onnx_minilm.embed_batch(texts)
    assert float(np.dot(batch[0], onnx_minilm.embed(texts[0]))) >= 0.98


def test_ranking_by_meaning_matches_torch(onnx_minilm: OnnxEmbedder, minilm: LocalEmbedder) -> None:
    query = "Which city does Maya live in?"
    texts = demo_texts()
    onnx_order = np.argsort(-(onnx_minilm.embed_batch(texts) @ onnx_minilm.embed(query)))[:3]
    torch_order = np.argsort(-(minilm.embed_batch(texts) @ minilm.embed(query)))[:3]
    assert onnx_order[0] == torch_order[0]


def test_empty_batch_gives_an_empty_matrix(onnx_minilm: OnnxEmbedder) -> None:
    assert onnx_minilm.embed_batch([]).shape == (0, 384)


def test_int8_vectors_are_stored_under_the_torch_model_name(
    onnx_minilm: OnnxEmbedder, minilm: LocalEmbedder
) -> None:
    assert onnx_minilm.model_name == minilm.model_name == MINILM_LABEL


# ----- the cached build --------------------------------------------------------------------------------------


def test_the_build_is_cached_under_the_models_dir(
    onnx_minilm: OnnxEmbedder, models_dir: Path
) -> None:
    source = resolve_local_model()
    assert (build_dir(models_dir, source.label, source.location) / MODEL_FILE).is_file()


def test_a_cached_build_is_reused_not_rebuilt(onnx_minilm: OnnxEmbedder, models_dir: Path) -> None:
    source = resolve_local_model()
    path = build_dir(models_dir, source.label, source.location) / MODEL_FILE
    before = path.stat().st_mtime_ns
    assert ensure_built(models_dir, source.label, source.location) == path
    assert path.stat().st_mtime_ns == before


def test_the_build_runs_each_layers_attention_as_one_fused_operator(
    onnx_minilm: OnnxEmbedder, models_dir: Path
) -> None:
    import onnx

    source = resolve_local_model()
    graph = onnx.load(str(build_dir(models_dir, source.label, source.location) / MODEL_FILE)).graph
    ops = [n.op_type for n in graph.node]
    # six layers: the first in float32, the other five in int8; no attention left as loose matrix products
    assert ops.count("Attention") == 1 and ops.count("QAttention") == 5
    assert "Softmax" not in ops


def test_a_graph_without_attention_to_fuse_stays_as_exported(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    weight = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], [0.5] * 16)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="plain")],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [weight],
    )
    source = tmp_path / "plain.onnx"
    onnx.save(helper.make_model(graph), str(source))
    assert onnx_runtime._fuse(source, tmp_path / "fused.onnx", 12, 384) == source
    assert not (tmp_path / "fused.onnx").exists()


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="building the ONNX model of broken failed"):
        ensure_built(tmp_path / "models", "broken", str(tmp_path / "not-a-model"))
    assert [p.name for p in (tmp_path / "models").iterdir() if not p.name.startswith(".")] == []


def test_a_remote_model_name_is_refused(models_dir: Path) -> None:
    with pytest.raises(EmbeddingError, match="local weights only"):
        OnnxEmbedder(models_dir, "some-org/some-model")


def test_a_missing_model_path_is_refused(models_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="does not exist"):
        OnnxEmbedder(models_dir, str(tmp_path / "no-such-model"))


# ----- configuration and selection ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", EMBEDDING_BACKENDS)
def test_every_named_backend_is_accepted(tmp_path: Path, backend: str) -> None:
    assert build_config(tmp_path, {"embedding_backend": backend}).embedding_backend == backend


@pytest.mark.parametrize("backend", ["ONNX", "cuda", "", "openvino"])
def test_an_unknown_backend_is_rejected(tmp_path: Path, backend: str) -> None:
    with pytest.raises(ConfigError, match="embedding_backend"):
        build_config(tmp_path, {"embedding_backend": backend})


@pytest.mark.parametrize(
    ("backend", "runtime"),
    [("auto", RUNTIME), ("local", RUNTIME), ("onnx", RUNTIME), ("torch", "torch")],
)
def test_the_service_runs_the_configured_runtime(
    tmp_path: Path,
    models_dir: Path,
    onnx_minilm: OnnxEmbedder,
    store: Store,
    backend: str,
    runtime: str,
) -> None:
    service = EmbeddingService(make_config(tmp_path, models_dir, embedding_backend=backend), store)
    service.start()
    assert service.wait_ready(120)
    assert service.status()["runtime"] == runtime
    service.stop()


def test_the_service_embeds_like_torch_with_onnx(
    tmp_path: Path, models_dir: Path, onnx_minilm: OnnxEmbedder, minilm: LocalEmbedder, store: Store
) -> None:
    service = EmbeddingService(make_config(tmp_path, models_dir, embedding_backend="onnx"), store)
    service.start()
    assert service.wait_ready(120)
    embedder = service.current()
    assert embedder is not None
    assert (
        float(
            np.dot(
                embedder.embed("I moved to Porto last month"),
                minilm.embed("I moved to Porto last month"),
            )
        )
        >= 0.99
    )
    service.stop()


def _no_onnx(*args: object, **kwargs: object) -> object:
    raise EmbeddingError("onnxruntime and onnx are not installed")


def test_auto_falls_back_to_torch_when_onnx_cannot_run(
    tmp_path: Path,
    models_dir: Path,
    minilm: LocalEmbedder,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(onnx_runtime, "load_onnx_model", _no_onnx)
    service = EmbeddingService(make_config(tmp_path, models_dir, embedding_backend="auto"), store)
    service.start()
    assert service.wait_ready(120)
    assert service.status()["runtime"] == "torch" and "onnxruntime" in str(
        service.status()["reason"]
    )
    service.stop()


def test_onnx_alone_is_unavailable_when_it_cannot_run(
    tmp_path: Path, models_dir: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_runtime, "load_onnx_model", _no_onnx)
    service = EmbeddingService(make_config(tmp_path, models_dir, embedding_backend="onnx"), store)
    service.start()
    assert not service.wait_ready(30)
    assert service.status()["state"] == "unavailable" and "onnxruntime" in str(
        service.status()["reason"]
    )


@pytest.mark.parametrize(
    ("backend", "planned"),
    [
        ("torch", "torch"),
        ("none", "none"),
        ("gemini", "gemini"),
        ("auto", f"{RUNTIME} (built)"),
        ("onnx", f"{RUNTIME} (built)"),
    ],
)
def test_the_planned_runtime_is_told_without_loading(
    tmp_path: Path, models_dir: Path, onnx_minilm: OnnxEmbedder, backend: str, planned: str
) -> None:
    assert planned_runtime(make_config(tmp_path, models_dir, embedding_backend=backend)) == planned


def test_an_unbuilt_model_is_planned_for_first_use(tmp_path: Path) -> None:
    assert (
        planned_runtime(make_config(tmp_path, tmp_path / "empty"))
        == f"{RUNTIME} (built on first use)"
    )


def test_cli_status_names_the_runtime(
    tmp_path: Path, models_dir: Path, onnx_minilm: OnnxEmbedder
) -> None:
    from click.testing import CliRunner

    from hermes_bowerbird.cli import cli

    env = {
        "BOWERBIRD_EMBEDDING_BACKEND": "auto",
        "BOWERBIRD_EMBEDDING_MODELS_DIR": str(models_dir),
        "BOWERBIRD_LLM_BACKEND": "none",
        "BOWERBIRD_MAINTENANCE_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
    }
    runner = CliRunner()
    runner.invoke(
        cli,
        ["--hermes-home", str(tmp_path), "remember", "I prefer tea"],
        env=env,
        catch_exceptions=False,
    )
    result = runner.invoke(
        cli, ["--hermes-home", str(tmp_path), "status"], env=env, catch_exceptions=False
    )
    assert f"runtime {RUNTIME}" in result.output
