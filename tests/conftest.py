"""Fixtures shared across test modules."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_bowerbird.config import Config, build_config, load_config
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.store import Store

if TYPE_CHECKING:  # the model and torch load only in tests that ask for them
    from hermes_bowerbird.embeddings.tier import VectorTier
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
# the int8 ONNX model is built once per machine for the tests (and their subprocesses), not once per HERMES_HOME
# provider tests curate on a thread (no worker process per test); tests/test_worker.py covers the process mode,
# and the stress tests run once per mode, telling their child processes which
os.environ.setdefault("BOWERBIRD_CURATION_MODE", "thread")
os.environ.setdefault(
    "BOWERBIRD_EMBEDDING_MODELS_DIR",
    str(Path(tempfile.gettempdir()) / f"bowerbird-test-models-{os.getuid()}"),
)


@pytest.fixture(scope="session")
def minilm() -> LocalEmbedder:
    """The real shipped all-MiniLM-L6-v2, loaded once for the whole test session."""
    from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder

    return LocalEmbedder()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny sentence-transformers model with e5's prompts ("query: ", "passage: ") and 32 dimensions, written
    once per session (tests/tiny_models.py); the same bytes every session, so its ONNX build is cached too."""
    from tiny_models import write_tiny_embedder

    return write_tiny_embedder(tmp_path_factory.mktemp("tiny") / "tiny-e5")


@pytest.fixture(scope="session")
def tiny_model_build(tiny_model: Path) -> Path:
    """The int8 ONNX build of `tiny_model` in the tests' shared build folder (built the first time only)."""
    from hermes_bowerbird.embeddings.onnx_runtime import ensure_built

    return ensure_built(
        Path(os.environ["BOWERBIRD_EMBEDDING_MODELS_DIR"]), "tiny-e5", str(tiny_model)
    )


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny sentence-transformers CrossEncoder (one relevance score per pair), written once per session."""
    from tiny_models import write_tiny_cross_encoder

    return write_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "tiny-ce")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A migrated database in the test's own folder (modules that need a clock override this)."""
    opened = Store.open(tmp_path / "m.db")
    yield opened
    opened.close()


@pytest.fixture
def vectors(store: Store, minilm: LocalEmbedder) -> VectorTier:
    """The vector tier over `store` with the real MiniLM, ready at once."""
    from hermes_bowerbird.embeddings.service import EmbeddingService
    from hermes_bowerbird.embeddings.tier import VectorTier

    return VectorTier(store, EmbeddingService.from_embedder(minilm, store))


@pytest.fixture
def config(tmp_path: Path) -> Config:
    """Default settings; components under test get their store explicitly, so the db path is unused."""
    return build_config(tmp_path, {"db_path": str(tmp_path / "unused.db")})


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Bowerbird]:
    """An engine with no model at all (no embeddings, no LLM): the heuristic curator, full text and the graph;
    it curates on the caller's thread. Modules that need a model, a clock or other settings override it."""
    config = load_config(
        tmp_path, environ={"BOWERBIRD_EMBEDDING_BACKEND": "none", "BOWERBIRD_LLM_BACKEND": "none"}
    )
    bowerbird = Bowerbird(config, background=False)
    yield bowerbird
    bowerbird.shutdown()


@pytest.fixture
def chat_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A memory home for conversations through the provider: the local model, no LLM, no maintenance, and a
    prefetch timeout no test machine reaches."""
    monkeypatch.setenv("BOWERBIRD_LLM_BACKEND", "none")
    monkeypatch.setenv("BOWERBIRD_MAINTENANCE_ENABLED", "false")
    monkeypatch.setenv("BOWERBIRD_PREFETCH_TIMEOUT_SECONDS", "10")
    return load_config(tmp_path)


@pytest.fixture
def chat(chat_config: Config, minilm: LocalEmbedder) -> Iterator[BowerbirdProvider]:
    """A provider on `chat_config`'s home sharing an engine with the session's model, session "s0" open."""
    engine = Bowerbird.open_shared(chat_config, embedder=minilm)
    opened = BowerbirdProvider()
    opened.initialize("s0", hermes_home=str(chat_config.hermes_home), platform="cli")
    yield opened
    opened.shutdown()
    engine.release()
