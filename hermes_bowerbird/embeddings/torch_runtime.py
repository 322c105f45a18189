"""The local model under sentence-transformers (torch) on the CPU."""

from __future__ import annotations

import logging
import os
import threading
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EmbeddingError
from .local import (
    LOADED_MODELS,
    LoadedModels,
    LocalRuntime,
    ModelSource,
    Prompts,
    choose_prompts,
    describe_prompts,
    resolve_local_model,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]

log = logging.getLogger(__name__)


class _LoadedModel:
    """A SentenceTransformer shared through `LoadedModels`, with the lock its tokenizer needs."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.lock = threading.Lock()
        self.dimension = int(_dimension_of(model))
        self.prompts = _prompts_of(model)


def _prompts_of(model: Any) -> Prompts:
    prompts = getattr(model, "prompts", None)
    if not isinstance(prompts, dict):
        return Prompts()
    return choose_prompts(prompts, getattr(model, "default_prompt_name", None))


def _dimension_of(model: Any) -> int:
    getter = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    return int(getter())


def _load_model(source: ModelSource) -> _LoadedModel:
    if source.offline:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        # no progress bars in the host terminal
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    started = time.perf_counter()
    try:
        from sentence_transformers import SentenceTransformer

        loaded = _LoadedModel(SentenceTransformer(source.location, device="cpu"))
    except ImportError as exc:
        raise EmbeddingError(f"sentence-transformers is not installed ({exc})") from exc
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        raise EmbeddingError(f"cannot load the embedding model {source.location!r}: {exc}") from exc
    log.info(
        "loaded embedding model %s in %.1f s%s",
        source.label,
        time.perf_counter() - started,
        describe_prompts(loaded.prompts),
    )
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


class LocalEmbedder(LocalRuntime):
    """sentence-transformers on the CPU (torch); unit float32 vectors, with the model's query and document
    prompts."""

    runtime = "torch"

    def __init__(
        self,
        model: str = "",
        *,
        batch_size: int = 16,
        threads: int = 0,
        models: LoadedModels = LOADED_MODELS,
    ) -> None:
        _set_torch_threads(threads)
        self._source = resolve_local_model(model)
        self._loaded = models.get(
            self.runtime, self._source.location, lambda: _load_model(self._source)
        )
        self._batch_size = batch_size
        self.prompts = self._loaded.prompts

    @property
    def dimension(self) -> int:
        return self._loaded.dimension

    def _encoding(self) -> AbstractContextManager[object]:
        return self._loaded.lock  # one model shared by every engine in the process

    def _encode(self, texts: list[str], prompt: str) -> FloatArray:
        # an explicit prompt, also an empty one, keeps sentence-transformers from adding the model's default
        return np.asarray(
            self._loaded.model.encode(
                texts,
                prompt=prompt,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )
