"""The per-user cache of built model files: one folder per model's files and recipe, built once, shared by every home.

A build (the int8 ONNX graph of a local model, onnx_runtime.py) takes seconds to minutes and depends only on the
model's files and the build recipe, never on a memory home. So builds live in one folder per machine and user
(config `embedding_models_dir`, by default under `$XDG_CACHE_HOME` or `~/.cache`), named by a digest of the
model's files and the recipe's version: another model, or changed weights, gets a build of its own, and two copies
of the same model (two environments) share one. One process builds while the others wait on the folder's file
lock; a finished build is a folder moved into place whole, with a stamp naming what it was built from and the
size of its model file, so a truncated file reads as no build. A build an older release kept inside a memory
home (`$HERMES_HOME/bowerbird/models`) is moved here when it was made from the same files, not built again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import filelock

log = logging.getLogger(__name__)

STAMP_FILE = "build.json"
# the digests of model folders already read, by their files' sizes and times
DIGESTS_FILE = ".digests.json"
# export folders of other runtimes shipped beside some models' weights: the build never reads them
SKIPPED_FOLDERS = frozenset({"onnx", "openvino"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

Signature = list[tuple[str, int, int]]


@dataclass(frozen=True)
class Recipe:
    """What a build makes: its model file, a folder-name tag, and a version bumped whenever the recipe changes."""

    model_file: str
    tag: str
    version: int


@dataclass(frozen=True)
class BuildSource:
    """A local model to build from: the name its vectors are stored under, its folder and its files' digest."""

    label: str
    location: str
    digest: str


def source_files(location: str) -> list[Path]:
    """The files a build may read from the model folder: all but documentation and other runtimes' exports."""
    root = Path(location)
    files = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if parts[0] in SKIPPED_FOLDERS or any(p.startswith(".") for p in parts):
            continue
        if path.is_file() and path.suffix.lower() != ".md":
            files.append(path)
    return files


def _signature(location: str, files: Sequence[Path]) -> Signature:
    root = Path(location)
    out = []
    for path in files:
        info = path.stat()
        out.append((path.relative_to(root).as_posix(), info.st_size, info.st_mtime_ns))
    return out


def source_digest(location: str, memo_dir: Path | None = None) -> str:
    """sha256 over the model folder's files (their paths and contents): the same model gives the same digest
    wherever it is installed. Reading ~90 MB of weights takes ~0.3 s, so a digest is remembered in `memo_dir`
    beside the files' sizes and modification times, and read again only when those changed."""
    files = source_files(location)
    signature = _signature(location, files)
    memo = _read_memo(memo_dir)
    known = memo.get(location)
    if isinstance(known, dict) and _same_signature(known.get("files"), signature):
        return str(known.get("digest"))
    digest = hashlib.sha256()
    for path, (relative, size, _) in zip(files, signature, strict=True):
        digest.update(f"{relative}\0{size}\0".encode())
        with path.open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    value = digest.hexdigest()
    if memo_dir is not None:
        _write_memo(memo_dir, {**memo, location: {"files": signature, "digest": value}})
    return value


def _same_signature(stored: Any, signature: Signature) -> bool:
    return isinstance(stored, list) and [tuple(row) for row in stored] == signature


def _read_memo(memo_dir: Path | None) -> dict[str, Any]:
    if memo_dir is None:
        return {}
    try:
        data = json.loads((memo_dir / DIGESTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_memo(memo_dir: Path, memo: dict[str, Any]) -> None:
    """Replace the memo file whole (a concurrent writer's entry may be lost: it is only read again)."""
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".digests-", dir=memo_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(memo, handle)
        os.replace(tmp, memo_dir / DIGESTS_FILE)
    except OSError as exc:
        log.debug("cannot remember the model digest in %s: %s", memo_dir, exc)


def read_stamp(folder: Path) -> dict[str, Any] | None:
    try:
        stamp = json.loads((folder / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def write_stamp(folder: Path, source: BuildSource, recipe: Recipe) -> None:
    """Record what the build in `folder` was made from and its model file's size (written last, before the move)."""
    stamp = {
        "version": recipe.version,
        "label": source.label,
        "source": source.location,
        "digest": source.digest,
        "size": (folder / recipe.model_file).stat().st_size,
        "build_id": uuid.uuid4().hex,
        "built_at": time.time(),
    }
    (folder / STAMP_FILE).write_text(json.dumps(stamp), encoding="utf-8")


class BuildCache:
    """Builds of one recipe under `root`, with the legacy folders of memory homes to adopt builds from."""

    def __init__(self, root: Path, recipe: Recipe, legacy: Iterable[Path] = ()) -> None:
        self.root = root
        self.recipe = recipe
        self.legacy = tuple(p for p in legacy if p != root)

    def source(self, label: str, location: str) -> BuildSource:
        return BuildSource(label, location, source_digest(location, self.root))

    def folder(self, source: BuildSource) -> Path:
        key = hashlib.sha256(f"{source.digest}\0{self.recipe.version}".encode()).hexdigest()[:16]
        return self.root / f"{_UNSAFE.sub('_', source.label)}-{self.recipe.tag}-{key}"

    def built(self, source: BuildSource) -> Path | None:
        """The model file of a complete build of `source`, or None."""
        folder = self.folder(source)
        return folder / self.recipe.model_file if self._complete(folder, source) else None

    def build_id(self, source: BuildSource) -> str | None:
        stamp = read_stamp(self.folder(source))
        return None if stamp is None else str(stamp.get("build_id"))

    def ensure(
        self,
        source: BuildSource,
        build: Callable[[Path, BuildSource], None],
        *,
        damaged: str | None = None,
    ) -> Path:
        """The model file of `source`'s build, built by `build(folder, source)` first when there is none (or when
        the build with id `damaged` could not be loaded). One builder at a time across processes; the others wait
        here and then use its build."""
        folder = self.folder(source)
        if damaged is None and self._complete(folder, source):
            return folder / self.recipe.model_file
        self.root.mkdir(parents=True, exist_ok=True)
        with filelock.held_exclusive(self.root / f".{folder.name}.lock"):
            if damaged is not None and self.build_id(source) == damaged:
                log.warning("the cached build %s cannot be loaded; building it again", folder)
                shutil.rmtree(folder, ignore_errors=True)
            if not self._complete(folder, source) and not self._adopt(source, folder):
                self._build(source, folder, build)
                self._remove_outdated(source.label)
        return folder / self.recipe.model_file

    def _build(
        self, source: BuildSource, folder: Path, build: Callable[[Path, BuildSource], None]
    ) -> None:
        started = time.perf_counter()
        log.info(
            "building the %s model of %s in %s (once for this machine and user; it may take a minute)",
            self.recipe.tag,
            source.label,
            folder,
        )
        build(folder, source)
        if not self._complete(folder, source):
            raise OSError(f"the build of {source.label} left no complete model in {folder}")
        log.info(
            "built the %s model of %s in %.1f s",
            self.recipe.tag,
            source.label,
            time.perf_counter() - started,
        )

    def _complete(self, folder: Path, source: BuildSource) -> bool:
        stamp = read_stamp(folder)
        if stamp is None or stamp.get("version") != self.recipe.version:
            return False
        if stamp.get("digest") != source.digest:
            return False
        try:
            size = (folder / self.recipe.model_file).stat().st_size
        except OSError:
            return False
        return bool(size == stamp.get("size"))

    # -- builds made before the cache was shared ----------------------------------------------------------------
    def _adopt(self, source: BuildSource, folder: Path) -> bool:
        """Move a build of the same files by the same recipe from a memory home's old folder (or this one's
        older naming) into `folder`; False when there is none."""
        for candidate in self._legacy_builds(source):
            work = Path(tempfile.mkdtemp(prefix=".adopt-", dir=self.root))
            try:
                shutil.copytree(candidate, work, dirs_exist_ok=True)
                write_stamp(work, source, self.recipe)
                shutil.rmtree(folder, ignore_errors=True)  # an unfinished or damaged build
                work.rename(folder)
            except OSError as exc:
                shutil.rmtree(work, ignore_errors=True)
                log.info("cannot reuse the earlier build %s (%s)", candidate, exc)
                continue
            if candidate.parent != self.root or candidate.name != folder.name:
                shutil.rmtree(candidate, ignore_errors=True)
            log.info("moved the earlier build %s to %s", candidate, folder)
            return True
        return False

    def _legacy_builds(self, source: BuildSource) -> list[Path]:
        """Finished builds by this recipe's version of the model at `source.location`, made after its files were
        last written (so from these files), in the legacy folders and under this cache's older names."""
        newest = max((p.stat().st_mtime for p in source_files(source.location)), default=0.0)
        found = []
        for root in (self.root, *self.legacy):
            for candidate in sorted(
                root.glob(f"{_UNSAFE.sub('_', source.label)}-{self.recipe.tag}-*")
            ):
                stamp = read_stamp(candidate)
                model = candidate / self.recipe.model_file
                if (
                    stamp is not None
                    and "digest" not in stamp
                    and stamp.get("version") == self.recipe.version
                    and stamp.get("source") == source.location
                    and model.is_file()
                    and model.stat().st_mtime >= newest
                ):
                    found.append(candidate)
        return found

    def _remove_outdated(self, label: str) -> None:
        """Delete this model's builds by an older recipe (a newer release's builds, in a shared cache, stay)."""
        for folder in self.root.glob(f"{_UNSAFE.sub('_', label)}-{self.recipe.tag}-*"):
            stamp = read_stamp(folder)
            if stamp is None:
                continue  # unfinished, or another process's build in progress: not ours to judge
            version = stamp.get("version")
            if (
                stamp.get("label") == label
                and isinstance(version, int)
                and version < self.recipe.version
            ):
                shutil.rmtree(folder, ignore_errors=True)
                (self.root / f".{folder.name}.lock").unlink(missing_ok=True)
                log.info("removed the outdated build %s", folder.name)
