"""The host's budgets as behaviour: shutdown returns with turns still queued (they resume at the next start), and
initialize returns before a large MEMORY.md is imported. The numbers are in benchmarks/bench_host_budgets.py."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hermes_bowerbird.config import Config, build_config
from hermes_bowerbird.embeddings.torch_runtime import LocalEmbedder
from hermes_bowerbird.engine import Bowerbird
from hermes_bowerbird.provider import BowerbirdProvider
from hermes_bowerbird.store import Store

TURNS = 1_000
ENTRIES = 1_000
pytestmark = pytest.mark.slow  # a thousand turns and a thousand entries through the real model
GENEROUS_SECONDS = 8.0  # "does not hang": the budget is 5 s, the shutdown's own bound 4 s


class SlowModel:
    """The local model on a busy machine: every batch takes `pause` seconds longer (a fake at the model)."""

    def __init__(self, model: LocalEmbedder, pause: float) -> None:
        self.model = model
        self.pause = pause
        self.model_name = model.model_name
        self.dimension = model.dimension
        self.is_local = True

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.pause)
        return np.asarray(self.model.embed_batch(list(texts)), dtype=np.float32)


def _config(home: Path, **settings: object) -> Config:
    return build_config(home, {"llm_backend": "none", "maintenance_enabled": False, **settings})


def _provider_on(config: Config, model: SlowModel, session: str) -> BowerbirdProvider:
    """A provider whose shared engine uses `model`; the provider holds the only reference to it."""
    holder = Bowerbird.open_shared(config, embedder=model)
    provider = BowerbirdProvider(config)
    provider.initialize(session, hermes_home=str(config.hermes_home), platform="cli")
    holder.release()
    return provider


def _journal(config: Config) -> dict[str, int]:
    store = Store.open(config.store_target)
    try:
        return store.journal.counts()
    finally:
        store.close()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def queued(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, minilm: LocalEmbedder
) -> tuple[Config, float]:
    """1,000 turns synced to a provider whose model is slow, then shut down: (config, shutdown seconds); the
    memory in a file, and on a server."""
    server = (
        {}
        if request.param == "sqlite"
        else {"database_url": request.getfixturevalue("pg_server").fresh()}
    )
    config = _config(tmp_path_factory.mktemp("queued"), import_markdown=False, **server)
    provider = _provider_on(config, SlowModel(minilm, pause=0.3), "busy")
    for i in range(TURNS):
        provider.sync_turn(
            f"Turn {i}: the nightly export of shard {i} finished at {i % 24:02d}:15.", "Noted."
        )
    started = time.monotonic()
    provider.shutdown()
    return config, time.monotonic() - started


def test_shutdown_with_a_thousand_turns_queued_does_not_wait_for_them(
    queued: tuple[Config, float],
) -> None:
    _, seconds = queued
    assert seconds < GENEROUS_SECONDS


def test_turns_not_curated_at_shutdown_stay_pending(queued: tuple[Config, float]) -> None:
    config, _ = queued
    counts = _journal(config)
    assert counts.get("pending", 0) > 0 and sum(counts.values()) == TURNS


def test_pending_turns_resume_at_the_next_start(queued: tuple[Config, float]) -> None:
    config, _ = queued
    # vectors catch up later
    provider = BowerbirdProvider(replace(config, embedding_backend="none"))
    provider.initialize("next", hermes_home=str(config.hermes_home), platform="cli")
    assert provider.engine is not None and provider.engine.flush(300)
    provider.shutdown()
    assert _journal(config) == {"done": TURNS}


@pytest.fixture(scope="module")
def queued_in_process_mode(tmp_path_factory: pytest.TempPathFactory) -> tuple[Config, float]:
    """1,000 turns synced while the memory home's worker process loads its model, then shut down."""
    config = _config(
        tmp_path_factory.mktemp("queued-process"), import_markdown=False, curation_mode="process"
    )
    provider = BowerbirdProvider(config)
    provider.initialize("busy", hermes_home=str(config.hermes_home), platform="cli")
    for i in range(TURNS):
        provider.sync_turn(
            f"Turn {i}: the nightly export of shard {i} finished at {i % 24:02d}:15.", "Noted."
        )
    started = time.monotonic()
    provider.shutdown()
    return config, time.monotonic() - started


def test_shutdown_in_process_mode_does_not_wait_for_the_worker(
    queued_in_process_mode: tuple[Config, float],
) -> None:
    _, seconds = queued_in_process_mode
    assert seconds < GENEROUS_SECONDS


def test_the_worker_leaves_with_its_last_provider(
    queued_in_process_mode: tuple[Config, float],
) -> None:
    from hermes_bowerbird.curation.worker import worker_state

    config, _ = queued_in_process_mode
    deadline = time.monotonic() + 30
    while worker_state(config.db_path).alive and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not worker_state(config.db_path).alive


def test_turns_the_worker_did_not_curate_stay_in_the_journal(
    queued_in_process_mode: tuple[Config, float],
) -> None:
    config, _ = queued_in_process_mode
    assert sum(_journal(config).values()) == TURNS


@pytest.fixture
def big_memory_md(tmp_path: Path) -> Path:
    folder = tmp_path / "memories"
    folder.mkdir()
    entries = [
        f"Server {i} of the lab cluster runs the {('build', 'test', 'deploy')[i % 3]} stage on port {8000 + i}."
        for i in range(ENTRIES)
    ]
    (folder / "MEMORY.md").write_text("\n§\n".join(entries), encoding="utf-8")
    return tmp_path


def _held(provider: BowerbirdProvider) -> int:
    assert provider.engine is not None
    return sum(provider.engine.store.memories.count_by_type(provider.visible).values())


def test_initialize_returns_before_a_large_memory_md_is_imported(
    big_memory_md: Path, minilm: LocalEmbedder
) -> None:
    config = _config(big_memory_md, import_markdown=True)
    provider = _provider_on(config, SlowModel(minilm, pause=0.3), "init")
    held_at_return = _held(provider)
    deadline = time.monotonic() + 120
    while _held(provider) <= held_at_return and time.monotonic() < deadline:
        time.sleep(0.2)  # the import goes on in the background
    held_later = _held(provider)
    provider.shutdown()  # stops the import between batches; the next start imports the rest
    assert (held_at_return < ENTRIES, held_later > held_at_return) == (True, True)
