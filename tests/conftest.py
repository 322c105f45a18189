"""Fixtures shared across test modules."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pg_server import PgTestServer, running_server

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
def pg_server() -> Iterator[PgTestServer]:
    """A PostgreSQL server with pgvector for the whole session (BOWERBIRD_TEST_DATABASE_URL, or a private one)."""
    with running_server() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PgTestServer) -> Iterator[str]:
    """A database of the test's own on the test server, with the current schema applied."""
    url = pg_server.fresh()
    yield url
    pg_server.close_connections(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request: pytest.FixtureRequest) -> str:
    """The storage backend a test runs on: every test that asks runs on both."""
    return str(request.param)


@pytest.fixture
def store_target(storage: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path | str:
    """Where the test's store lives on its backend: a file in its folder, or a database of its own."""
    if storage == "sqlite":
        return tmp_path / "m.db"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def storage_env(store_target: Path | str, monkeypatch: pytest.MonkeyPatch) -> Path | str:
    """Every memory home the test opens keeps its memory on the test's backend (the database, or its own file)."""
    if isinstance(store_target, str):
        monkeypatch.setenv("BOWERBIRD_DATABASE_URL", store_target)
    return store_target


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
def store(store_target: Path | str) -> Iterator[Store]:
    """A migrated store of the test's own on each backend (modules that need a clock override this)."""
    opened = Store.open(store_target)
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
def engine(tmp_path: Path, storage_env: Path | str) -> Iterator[Bowerbird]:
    """An engine with no model at all (no embeddings, no LLM): the heuristic curator, full text and the graph;
    it curates on the caller's thread; on each backend. Modules that need a model, a clock or other settings
    override it."""
    environ = {"BOWERBIRD_EMBEDDING_BACKEND": "none", "BOWERBIRD_LLM_BACKEND": "none"}
    if isinstance(storage_env, str):
        environ["BOWERBIRD_DATABASE_URL"] = storage_env
    config = load_config(tmp_path, environ=environ)
    bowerbird = Bowerbird(config, background=False)
    yield bowerbird
    bowerbird.shutdown()


@pytest.fixture
def chat_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, storage_env: Path | str) -> Config:
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
