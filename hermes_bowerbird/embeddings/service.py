"""The embedding service: chooses and loads the backend in the background, then catches the vectors up."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from ..config import EMBEDDING_BACKENDS
from ..errors import DatabaseError, EmbeddingError
from ..types import Clock, Embedder, ItemKind, VectorModel
from .cache import CachedEmbedder
from .gemini import GeminiEmbedder, GeminiEmbeddingSettings
from .index import DEFAULT_ANN_THRESHOLD, IndexRegistry
from .local import resolve_local_model
from .onnx_runtime import RUNTIME, OnnxEmbedder, is_built, onnx_available, read_layout
from .reindex import KINDS, reindex_all, shared_index
from .torch_runtime import LocalEmbedder

if TYPE_CHECKING:
    from ..config import Config
    from ..store import Store

log = logging.getLogger(__name__)

LOAD_THREAD_NAME = "bowerbird-embed-load"
CHECK_THREAD_NAME = "bowerbird-embed-check"


class EmbeddingState(StrEnum):
    LOADING = "loading"
    READY = "ready"
    # loaded, but the store's vectors were made by another model: recall leaves vectors out until a reindex
    OTHER_MODEL = "other model"
    UNAVAILABLE = "unavailable"
    DISABLED = "disabled"


# how often a service whose store holds another model's vectors looks again (a reindex may have finished)
RECHECK_SECONDS = 2.0


LOCAL_RUNTIMES: dict[str, tuple[str, ...]] = {"onnx": ("onnx",), "torch": ("torch",)}
DEFAULT_RUNTIMES = ("onnx", "torch")  # auto and local: int8 ONNX when it can run, else torch


class EmbeddingService:
    """Chooses and loads the embedder without blocking start-up, and reports loudly what it is doing."""

    def __init__(
        self,
        config: Config | None,
        store: Store | None = None,
        clock: Clock = time.time,
        *,
        auto_reindex: bool = True,
        indexes: IndexRegistry | None = None,
        gemini: GeminiEmbeddingSettings | None = None,
    ) -> None:
        """`indexes`: the registry shared with the other engines over the same files (else one of its own);
        `gemini`: Gemini settings to use instead of the configuration's."""
        self.config = config
        self.store = store
        self.clock = clock
        self.auto_reindex = auto_reindex
        self.indexes = indexes if indexes is not None else IndexRegistry()
        self._gemini = gemini
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._settled = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._embedder: Embedder | None = None
        self._backend = "none"
        self._runtime: str | None = None
        self._state = EmbeddingState.LOADING
        self._reason = "not started"
        self._reindex: dict[str, object] | None = None
        self._started = False
        self._loaded_reason = ""
        self._checked = 0.0
        self._rechecking = threading.Event()
        self._checker: threading.Thread | None = None

    @classmethod
    def from_embedder(
        cls,
        embedder: Embedder,
        store: Store | None = None,
        *,
        config: Config | None = None,
        auto_reindex: bool = True,
        cache: bool = True,
        indexes: IndexRegistry | None = None,
    ) -> EmbeddingService:
        """A service that is ready at once with ``embedder`` (cached through ``store`` when given)."""
        service = cls(config, store, auto_reindex=auto_reindex, indexes=indexes)
        service._set_ready(
            embedder,
            "local" if embedder.is_local else "remote",
            "provided",
            cache=cache,
            runtime=getattr(embedder, "runtime", None),
        )
        return service

    # ----- public ------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin choosing/loading the backend on the named background thread; returns at once."""
        with self._lock:
            if self._started:
                return
            self._started = True
        if self._ready.is_set():
            self._spawn(self._after_ready)
            return
        backend = self.config.embedding_backend if self.config is not None else "auto"
        if backend not in EMBEDDING_BACKENDS:
            self._set_unavailable(
                f"unknown embedding_backend {backend!r}; "
                f"expected one of {', '.join(EMBEDDING_BACKENDS)}"
            )
        elif backend == "none":
            self._set_state(
                EmbeddingState.DISABLED,
                "none",
                "embedding_backend is 'none': retrieval uses keywords and the graph only",
            )
            self._settled.set()
        elif backend == "gemini":
            self._set_state(EmbeddingState.LOADING, "gemini", "setting up Gemini embeddings")
            self._spawn(self._load_gemini)
        else:
            self._set_state(EmbeddingState.LOADING, "local", "loading the local embedding model")
            self._spawn(self._load_local)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask a running reindex to stop and join the background thread."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def current(self) -> Embedder | None:
        """The (cached) embedder vectors are made and searched with: None while loading, when there is none, and
        while the store's vectors come from another model (never compared across models; see `check_store`)."""
        if not self._ready.is_set():
            return None
        if (
            self._state is EmbeddingState.OTHER_MODEL
            and time.monotonic() - self._checked > RECHECK_SECONDS
            and not self._rechecking.is_set()
        ):
            self._rechecking.set()  # looked at on a thread of its own: a search never waits for it
            self._checker = threading.Thread(
                target=self._recheck, name=CHECK_THREAD_NAME, daemon=True
            )
            self._checker.start()
        return self._embedder if self._state is EmbeddingState.READY else None

    def _recheck(self) -> None:
        try:
            self.check_store()
        finally:
            self._rechecking.clear()

    def loaded(self) -> Embedder | None:
        """The loaded embedder also while the store's vectors come from another model (to re-embed the store)."""
        return self._embedder if self._ready.is_set() else None

    def check_store(self) -> None:
        """Compare the loaded model with the ones the store's vectors were made with (a reindex, here or in
        another process, may have changed them): ready when every stored vector is the loaded model's, else on
        another model, with a warning when that starts."""
        embedder = self._embedder
        if not self._ready.is_set() or embedder is None or self.store is None:
            return
        self._checked = time.monotonic()
        mine = VectorModel(embedder.model_name, embedder.dimension)
        try:
            other = self.store.vectors.any_other_model(mine.name, mine.dim)
            if not other:
                self._now_on_store_model()
            elif self._state is not EmbeddingState.OTHER_MODEL:
                self._now_on_other_model(mine, self.store.vectors.other_models(mine.name, mine.dim))
        except DatabaseError:
            log.warning("cannot read which models made the stored vectors", exc_info=True)

    def _now_on_other_model(self, mine: VectorModel, others: dict[VectorModel, int]) -> None:
        named = ", ".join(f"{count} by {model}" for model, count in sorted(others.items(), key=str))
        reason = (
            f"stored vectors were made with another model ({named}); the configured model is {mine}: "
            f"recall uses keywords and the graph, not vectors, until every item is re-embedded with "
            f"{mine.name} (`bowerbird reindex`)"
        )
        log.warning("%s", reason)
        with self._lock:
            self._state, self._reason = EmbeddingState.OTHER_MODEL, reason

    def _now_on_store_model(self) -> None:
        with self._lock:
            was_other = self._state is EmbeddingState.OTHER_MODEL
            if was_other:
                self._state, self._reason = EmbeddingState.READY, self._loaded_reason
        if was_other:
            log.info("every stored vector is now from the configured model: recall uses them again")

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the backend is chosen; True when an embedder is loaded (see `current` for whether its
        vectors are the store's)."""
        self._settled.wait(timeout)
        return self._ready.is_set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the background threads (loading and any reindex, a look at the store) to finish; True when
        they have."""
        checker = self._checker
        if checker is not None:
            checker.join(timeout)
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive() and (checker is None or not checker.is_alive())
        return checker is None or not checker.is_alive()

    def status(self) -> dict[str, object]:
        if self._state is EmbeddingState.OTHER_MODEL:
            self.check_store()  # a reindex may have ended since
        embedder = self._embedder if self._ready.is_set() else None
        return {
            "other_models": self._other_models(embedder),
            "backend": self._backend,
            "runtime": self._runtime if embedder is not None else None,
            "configured": self.config.embedding_backend if self.config is not None else "provided",
            "model": embedder.model_name if embedder is not None else None,
            "dimension": embedder.dimension if embedder is not None else None,
            "state": str(self._state),
            "reason": self._reason,
            "reindex": self._reindex,
        }

    def _other_models(self, embedder: Embedder | None) -> dict[str, int]:
        """Stored vectors by model, of models other than the loaded one (only looked up while there are any)."""
        if embedder is None or self.store is None or self._state is not EmbeddingState.OTHER_MODEL:
            return {}
        try:
            found = self.store.vectors.other_models(embedder.model_name, embedder.dimension)
        except DatabaseError:
            log.warning("cannot read which models made the stored vectors", exc_info=True)
            return {}
        return {str(model): count for model, count in found.items()}

    # ----- background work ---------------------------------------------------------------------

    def _spawn(self, target: Callable[[], None]) -> None:
        self._thread = threading.Thread(target=target, name=LOAD_THREAD_NAME, daemon=True)
        self._thread.start()

    def _load_local(self) -> None:
        """The configured local runtime(s) in order of preference; the first that loads is used."""
        assert self.config is not None
        failures: list[str] = []
        for runtime in LOCAL_RUNTIMES.get(self.config.embedding_backend, DEFAULT_RUNTIMES):
            started = self.clock()
            try:
                embedder = self._local_embedder(runtime)
            except EmbeddingError as exc:
                log.warning("local embedding runtime %s unavailable: %s", runtime, exc)
                failures.append(f"{runtime}: {exc}")
                continue
            elapsed = self.clock() - started
            fallback = f" ({'; '.join(failures)})" if failures else ""
            self._set_ready(
                embedder,
                "local",
                f"local model {embedder.model_name} ({embedder.runtime}) loaded in "
                f"{elapsed:.1f} s{fallback}",
                runtime=embedder.runtime,
            )
            break
        else:
            self._local_failed("; ".join(failures))
        if self._ready.is_set():
            self._after_ready()

    def _local_embedder(self, runtime: str) -> LocalEmbedder | OnnxEmbedder:
        assert self.config is not None
        if runtime == "onnx":
            return OnnxEmbedder(
                self.config.model_cache_dir,
                self.config.embedding_model,
                threads=self.config.embedding_threads,
                legacy=(self.config.home_models_dir,),
            )
        return LocalEmbedder(self.config.embedding_model, threads=self.config.embedding_threads)

    def _load_gemini(self) -> None:
        self._use_gemini(fallback_note="")
        if self._ready.is_set():
            self._after_ready()

    def _local_failed(self, why: str) -> None:
        assert self.config is not None
        if self.config.embedding_backend == "auto" and self.config.gemini_api_key:
            log.warning("local embedding model unavailable (%s); using Gemini embeddings", why)
            self._use_gemini(fallback_note=f"local model unavailable ({why}); ")
            return
        hint = "" if self.config.embedding_backend != "auto" else " and no GEMINI_API_KEY is set"
        self._set_unavailable(
            f"local embedding model unavailable ({why}){hint}: "
            "retrieval uses keywords and the graph only"
        )

    def _use_gemini(self, fallback_note: str) -> None:
        assert self.config is not None
        if not self.config.gemini_api_key:
            self._set_unavailable(
                "embedding_backend is 'gemini' but no GEMINI_API_KEY is set: "
                "retrieval uses keywords and the graph only"
            )
            return
        settings = self._gemini or GeminiEmbeddingSettings.from_config(self.config)
        try:
            embedder = GeminiEmbedder(settings)
        except (EmbeddingError, ImportError) as exc:
            self._set_unavailable(f"{fallback_note}cannot set up Gemini embeddings ({exc})")
            return
        self._set_ready(
            embedder,
            "gemini",
            f"{fallback_note}Gemini model {embedder.model_name}",
            runtime="remote",
        )

    def _after_ready(self) -> None:
        """Embed what has no vector from the loaded model (new items, and every item of a store embedded by
        another model: recall leaves vectors out until that is done), look at the store again, and load the
        in-memory indexes the first search would otherwise wait for."""
        embedder = self.loaded()
        if embedder is None or self.store is None:
            return
        if self.auto_reindex:
            try:
                self._reindex_all(embedder)
            except (EmbeddingError, DatabaseError) as exc:
                log.error("background reindex failed: %s", exc, exc_info=True)
                self._reindex = {**(self._reindex or {}), "error": str(exc)}
                return
            was_other = self._state is EmbeddingState.OTHER_MODEL
            self.check_store()
            if was_other and self._state is EmbeddingState.READY and not self._stop.is_set():
                self._after_ready()  # what came in while the last items were re-embedded
                return
        self._load_indexes(embedder)

    def _load_indexes(self, embedder: Embedder) -> None:
        """Read every kind's stored vectors into its shared index now: at 100K memories the read took longer than
        the host's prefetch budget, so the first turn after a start got no memory at all."""
        assert self.store is not None
        if self.store.vectors.ranks_nearest:
            return  # the server ranks them
        try:
            for kind in KINDS:
                if self._stop.is_set():
                    return
                shared_index(
                    self.indexes, self.store, kind, embedder, ann_threshold=self._ann_threshold
                )
        except Exception:  # the first search loads what is missing
            log.exception("could not load the vector indexes ahead of the first search")

    @property
    def _ann_threshold(self) -> int:
        return self.config.ann_threshold if self.config is not None else DEFAULT_ANN_THRESHOLD

    def _reindex_all(self, embedder: Embedder) -> None:
        assert self.store is not None
        reindex_all(
            self.store,
            embedder,
            self.indexes,
            ann_threshold=self._ann_threshold,
            progress=self._report,
            stop=self._stop,
        )

    def _report(self, kind: ItemKind, done: int, total: int) -> None:
        self._reindex = {"kind": str(kind), "done": done, "total": total}

    # ----- state -------------------------------------------------------------------------------

    def _set_ready(
        self,
        embedder: Embedder,
        backend: str,
        reason: str,
        *,
        cache: bool = True,
        runtime: str | None = None,
    ) -> None:
        wrapped: Embedder = (
            CachedEmbedder(embedder, self.store) if cache and self.store is not None else embedder
        )
        with self._lock:
            self._embedder, self._runtime = wrapped, runtime
            self._backend, self._state, self._reason = backend, EmbeddingState.READY, reason
            self._loaded_reason = reason
        self._ready.set()
        self.check_store()
        self._settled.set()

    def _set_unavailable(self, reason: str) -> None:
        log.warning("no embedding model: %s", reason)
        self._set_state(EmbeddingState.UNAVAILABLE, "none", reason)
        self._ready.clear()
        self._settled.set()

    def _set_state(self, state: EmbeddingState, backend: str, reason: str) -> None:
        with self._lock:
            self._state, self._backend, self._reason = state, backend, reason


def planned_model(config: Config) -> str | None:
    """The name a local model's vectors would be stored under, told without loading it (None: not local)."""
    if config.embedding_backend in ("none", "gemini"):
        return None
    try:
        return resolve_local_model(config.embedding_model).label
    except EmbeddingError:
        return None


def planned_runtime(config: Config) -> str:
    """The runtime a service with this configuration would embed with, told without loading any model."""
    backend = config.embedding_backend
    if backend in ("none", "gemini"):
        return backend
    runtimes = LOCAL_RUNTIMES.get(backend, DEFAULT_RUNTIMES)
    if "onnx" not in runtimes:
        return "torch"
    if not onnx_available():
        return (
            "torch (onnxruntime not installed)"
            if "torch" in runtimes
            else "none (onnxruntime not installed)"
        )
    try:
        source = resolve_local_model(config.embedding_model)
    except EmbeddingError as exc:
        return f"none ({exc})"
    fallback = "torch" if "torch" in runtimes else "none"
    if not source.offline:
        return f"{fallback} (the ONNX runtime builds from local weights only)"
    try:
        read_layout(source.location)
    except EmbeddingError as exc:
        return f"{fallback} ({exc})"
    try:
        built = is_built(config.model_cache_dir, source.label, source.location)
    except OSError as exc:
        return f"none ({exc})"
    return f"{RUNTIME} ({'built' if built else 'built on first use'})"
