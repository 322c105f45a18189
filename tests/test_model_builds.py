"""The per-user cache of int8 builds: one build per model's files, shared by every memory home and process, made by
one builder at a time, built again when damaged, and earlier homes' builds moved in rather than rebuilt."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hermes_bowerbird import filelock
from hermes_bowerbird.config import load_config
from hermes_bowerbird.embeddings.builds import (
    STAMP_FILE,
    BuildCache,
    BuildSource,
    Recipe,
    read_stamp,
    source_digest,
    write_stamp,
)
from hermes_bowerbird.embeddings.local import LoadedModels
from hermes_bowerbird.embeddings.onnx_runtime import RUNTIME, OnnxEmbedder
from hermes_bowerbird.embeddings.service import EmbeddingService
from hermes_bowerbird.store import Store

RECIPE = Recipe("model.bin", "int8", 3)


def fake_model(folder: Path, weights: bytes = b"weights-1") -> str:
    """A model folder as far as the cache reads it: its files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "README.md").write_text("documentation is not part of the model", encoding="utf-8")
    return str(folder)


class Builder:
    """The build step the cache runs (the ONNX export in real use): writes a model file into a work folder, stamps
    it and moves it into place whole, as the real build does; counts its runs."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.runs = 0
        self._lock = threading.Lock()

    def __call__(self, target: Path, source: BuildSource) -> None:
        with self._lock:
            self.runs += 1
        time.sleep(self.seconds)
        work = target.parent / f".work-{target.name}-{self.runs}"
        work.mkdir()
        (work / RECIPE.model_file).write_bytes(b"int8 model of " + source.digest.encode())
        write_stamp(work, source, RECIPE)
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)


def cache_and_source(tmp_path: Path, **legacy: Path) -> tuple[BuildCache, BuildSource]:
    cache = BuildCache(tmp_path / "cache", RECIPE, legacy.values())
    return cache, cache.source("mini", fake_model(tmp_path / "model"))


def builds_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


# ----- where builds live -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"XDG_CACHE_HOME": "/data/cache", "HOME": "/home/ana"},
            "/data/cache/hermes-bowerbird/models",
        ),
        ({"HOME": "/home/ana"}, "/home/ana/.cache/hermes-bowerbird/models"),
        # the XDG spec: a relative path is ignored
        (
            {"XDG_CACHE_HOME": "cache", "HOME": "/home/ana"},
            "/home/ana/.cache/hermes-bowerbird/models",
        ),
        (
            {"XDG_CACHE_HOME": "/data/cache", "BOWERBIRD_EMBEDDING_MODELS_DIR": "/opt/models"},
            "/opt/models",
        ),
    ],
)
def test_builds_live_in_the_users_cache_unless_configured(
    tmp_path: Path, env: dict[str, str], expected: str
) -> None:
    assert load_config(tmp_path, environ=env).model_cache_dir == Path(expected)


def test_every_home_of_a_user_shares_one_models_folder(tmp_path: Path) -> None:
    env = {"HOME": "/home/ana"}
    first = load_config(tmp_path / "work", environ=env)
    second = load_config(tmp_path / "personal", environ=env)
    assert first.model_cache_dir == second.model_cache_dir


def test_the_same_files_share_a_build_wherever_the_model_is_installed(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache", RECIPE)
    one = cache.source("mini", fake_model(tmp_path / "venv-a" / "mini"))
    two = cache.source("mini", fake_model(tmp_path / "venv-b" / "mini"))
    assert cache.folder(one) == cache.folder(two)


def test_changed_weights_get_a_build_of_their_own(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache", RECIPE)
    before = cache.folder(cache.source("mini", fake_model(tmp_path / "mini")))
    after = cache.folder(cache.source("mini", fake_model(tmp_path / "mini", b"weights-2")))
    assert before != after


def test_a_remembered_digest_is_read_again_when_the_files_change(tmp_path: Path) -> None:
    location = fake_model(tmp_path / "mini")
    first = source_digest(location, tmp_path / "cache")
    assert source_digest(location, tmp_path / "cache") == first
    (tmp_path / "mini" / "model.safetensors").write_bytes(b"weights-2")
    assert source_digest(location, tmp_path / "cache") != first


# ----- one build, once ---------------------------------------------------------------------------------------------


def test_a_build_is_made_once_with_a_log_line_then_reused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, source = cache_and_source(tmp_path)
    build = Builder()
    with caplog.at_level(logging.INFO, logger="hermes_bowerbird.embeddings.builds"):
        first = cache.ensure(source, build)
        second = cache.ensure(source, build)
    assert (first, second, build.runs) == (second, first, 1)
    assert [r.message.split(" (")[0] for r in caplog.records if "building" in r.message] == [
        f"building the int8 model of mini in {cache.folder(source)}"
    ]


def test_concurrent_builders_build_once_and_all_get_the_build(tmp_path: Path) -> None:
    cache, source = cache_and_source(tmp_path)
    build = Builder(seconds=0.3)
    got: list[Path] = []
    threads = [
        threading.Thread(target=lambda: got.append(cache.ensure(source, build))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert build.runs == 1
    assert got == [cache.folder(source) / RECIPE.model_file] * 4


def test_a_truncated_model_file_is_built_again(tmp_path: Path) -> None:
    cache, source = cache_and_source(tmp_path)
    build = Builder()
    model = cache.ensure(source, build)
    model.write_bytes(model.read_bytes()[:5])
    assert cache.ensure(source, build) == model
    assert build.runs == 2
    assert model.read_bytes() == b"int8 model of " + source.digest.encode()


def test_a_build_that_would_not_load_is_built_again_once(tmp_path: Path) -> None:
    cache, source = cache_and_source(tmp_path)
    build = Builder()
    cache.ensure(source, build)
    damaged = cache.build_id(source)
    cache.ensure(source, build, damaged=damaged)
    rebuilt = cache.build_id(source)
    # a second process that failed on the same damaged build finds it rebuilt already
    cache.ensure(source, build, damaged=damaged)
    assert build.runs == 2
    assert rebuilt != damaged
    assert cache.build_id(source) == rebuilt


def test_a_build_of_an_older_recipe_is_removed_and_a_newer_releases_kept(tmp_path: Path) -> None:
    cache, source = cache_and_source(tmp_path)
    for name, version in (("mini-int8-older", 2), ("mini-int8-newer", 4)):
        folder = cache.root / name
        folder.mkdir(parents=True)
        (folder / STAMP_FILE).write_text(json.dumps({"label": "mini", "version": version}))
    cache.ensure(source, Builder())
    assert builds_in(cache.root) == sorted([cache.folder(source).name, "mini-int8-newer"])


# ----- builds kept in memory homes by earlier releases ---------------------------------------------------------


def legacy_build(home_models: Path, location: str) -> Path:
    """A build as releases before the shared cache left it in a memory home."""
    folder = home_models / "mini-int8-0123456789ab"
    folder.mkdir(parents=True)
    (folder / RECIPE.model_file).write_bytes(b"an earlier build")
    stamp = {"version": RECIPE.version, "source": location, "label": "mini", "runtime": "onnx-int8"}
    (folder / STAMP_FILE).write_text(json.dumps(stamp), encoding="utf-8")
    return folder


def test_an_earlier_homes_build_of_the_same_files_is_moved_not_rebuilt(tmp_path: Path) -> None:
    home_models = tmp_path / "home" / "bowerbird" / "models"
    cache, source = cache_and_source(tmp_path, home=home_models)
    old = legacy_build(home_models, source.location)
    build = Builder()
    model = cache.ensure(source, build)
    assert build.runs == 0
    assert model.read_bytes() == b"an earlier build"
    assert not old.exists()
    assert (read_stamp(model.parent) or {}).get("digest") == source.digest


def test_an_earlier_build_older_than_the_weights_is_not_reused(tmp_path: Path) -> None:
    home_models = tmp_path / "home" / "bowerbird" / "models"
    cache, _ = cache_and_source(tmp_path, home=home_models)
    legacy_build(home_models, str(tmp_path / "model"))
    later = time.time() + 60
    os.utime(tmp_path / "model" / "model.safetensors", (later, later))
    build = Builder()
    cache.ensure(cache.source("mini", str(tmp_path / "model")), build)
    assert build.runs == 1


# ----- the real int8 model ---------------------------------------------------------------------------------------

CHILD_PREFETCH = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
from hermes_bowerbird.provider import BowerbirdProvider
provider = BowerbirdProvider()
provider.initialize("s1", hermes_home=sys.argv[1], platform="cli")
provider.prefetch("where do I live now?")
provider.engine.admin.wait_model(60)
print(json.dumps(provider.engine.status()["embedding"]))
provider.shutdown()
"""


@pytest.mark.slow
def test_a_second_homes_first_prefetch_in_another_process_uses_the_users_build(
    tmp_path: Path, tiny_model: Path, tiny_model_build: Path
) -> None:
    """Two memory homes, a process each, one user cache ($XDG_CACHE_HOME): the second home's first prefetch loads
    the build the first one used; nothing is built again."""
    xdg = tmp_path / "xdg"
    (xdg / "hermes-bowerbird").mkdir(parents=True)
    (xdg / "hermes-bowerbird" / "models").symlink_to(tiny_model_build.parent.parent)
    settings = {
        "XDG_CACHE_HOME": str(xdg),
        "BOWERBIRD_EMBEDDING_MODEL": str(tiny_model),
        "BOWERBIRD_EMBEDDING_BACKEND": "onnx",
        "BOWERBIRD_LLM_BACKEND": "none",
        "BOWERBIRD_MAINTENANCE_ENABLED": "false",
        "BOWERBIRD_CURATION_MODE": "thread",
        "BOWERBIRD_IMPORT_MARKDOWN": "false",
    }
    build_id = (read_stamp(tiny_model_build.parent) or {}).get("build_id")
    first = load_config(tmp_path / "first", environ=settings)
    store = Store.open(first.db_path)
    service = EmbeddingService(first, store)
    service.start()
    assert service.wait_ready(120)
    service.stop()
    store.close()
    env = {k: v for k, v in os.environ.items() if k != "BOWERBIRD_EMBEDDING_MODELS_DIR"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD_PREFETCH, str(tmp_path / "second")],
        env={**env, **settings},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["runtime"] == RUNTIME
    assert "building the int8 model" not in done.stderr
    assert builds_in(tiny_model_build.parent.parent).count(tiny_model_build.parent.name) == 1
    assert (read_stamp(tiny_model_build.parent) or {}).get("build_id") == build_id


@pytest.mark.slow
def test_a_corrupt_model_file_found_at_load_is_rebuilt_not_fatal(
    tmp_path: Path, tiny_model: Path, tiny_model_build: Path
) -> None:
    cache = tmp_path / "cache"
    copy = cache / tiny_model_build.parent.name
    shutil.copytree(tiny_model_build.parent, copy)
    damaged = (read_stamp(copy) or {}).get("build_id")
    size = (copy / tiny_model_build.name).stat().st_size
    (copy / tiny_model_build.name).write_bytes(b"\0" * size)
    embedder = OnnxEmbedder(cache, str(tiny_model), models=LoadedModels())
    reference = OnnxEmbedder(tiny_model_build.parent.parent, str(tiny_model), models=LoadedModels())
    text = "I moved to Porto last month"
    assert float(np.dot(embedder.embed(text), reference.embed(text))) > 0.999
    assert (read_stamp(copy) or {}).get("build_id") != damaged


def _build_while_locked(tmp_path: Path, hold_seconds: float) -> tuple[int, Builder]:
    """Run ensure on a thread while this thread holds the build's file lock (as another process would); how many
    builds had started before the release, and the builder."""
    cache, source = cache_and_source(tmp_path)
    build = Builder()
    builder = threading.Thread(target=cache.ensure, args=(source, build))
    with filelock.held_exclusive(cache.root / f".{cache.folder(source).name}.lock"):
        builder.start()
        time.sleep(hold_seconds)
        before = build.runs
    builder.join(30)
    return before, build


def test_a_build_waits_while_another_process_holds_the_build_lock(tmp_path: Path) -> None:
    before, _ = _build_while_locked(tmp_path, 0.5)
    assert before == 0


def test_a_build_runs_once_the_build_lock_is_released(tmp_path: Path) -> None:
    _, build = _build_while_locked(tmp_path, 0.1)
    assert build.runs == 1
